"""runner's stand-ins for esrally and OpenSearch Benchmark, shared by both: Rally's and OSB's
names, with their behaviour where runner needs it in Python (a track's runner built on one of
theirs, a param source built on theirs), and a clear error where a name only answers a probe."""
