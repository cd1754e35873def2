"""runner's stand-in for OpenSearch Benchmark, used only where it is not installed: the names
workloads import, OSB's spelling of esrally's (standin/ holds both)."""

__version__ = "runner-compat"
