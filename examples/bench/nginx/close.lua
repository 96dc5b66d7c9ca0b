-- wrk script: a new connection per request (Connection: close).
wrk.headers["Connection"] = "close"
