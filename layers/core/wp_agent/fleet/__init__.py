"""Fleet runs: one instruction over many sites — planned once on a canary site, approved once, the canary
first, then the rest with bounded concurrency, stopped above a tolerated failure count, one report.

The pieces the CLI's engine (engine.py, over the local SSH pool) and the workflow's tasks (service/fleets.py,
a Step Functions Distributed Map) share: the sessions of the planning run and of each site's run, what
each came to and the rules that gate the rest (runs.py), and a site's run of the approved plan (opening.py)."""
