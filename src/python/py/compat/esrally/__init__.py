"""runner's stand-in for esrally, used only where esrally is not installed: the few names
tracks import, nothing more. Install esrally (`pip install esrally==2.13.0`) for the rest."""

__version__ = "runner-compat"
