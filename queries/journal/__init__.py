"""The beacon's write-ahead journal: a ``/hit`` is answered 2xx only once it is in a file
that outlives the process (``log``), and one pipeline counts what the file holds, each
record exactly once, after a SIGKILL too (``pipeline``). ``records`` says what a record
holds."""
