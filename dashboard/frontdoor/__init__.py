"""What a request meets before it reaches Flask, under ``hitboard serve``.

The server faces the open internet (``/hit`` is called by strangers' browsers), so it
reads no more of a request than its route may send and waits no longer than its deadlines:
``limits`` holds both, from the settings; ``worker`` is the gunicorn worker that reads
whole requests on gevent's hub and runs the app in ordinary threads; ``guards`` gives the
same limits to Flask (for any other server) and answers odd asset paths with a 404.
"""
