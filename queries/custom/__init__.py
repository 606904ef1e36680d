"""Custom events (a signup, a download, a purchase) and the goals counted from them."""
