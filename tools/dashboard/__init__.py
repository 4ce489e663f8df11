"""`make dashboard`: a live page of nom's applications (issue 15, "A live view").

sources.py reads the guest (nhttpd's /nom/board and /nom/stats, memcached's `stats`);
collector.py turns readings into per-application rows and time series; plot.py draws a series
as SVG; page.py is the HTML; server.py serves them on 127.0.0.1; __main__.py is the command.
"""
