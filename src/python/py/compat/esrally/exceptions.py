"""esrally.exceptions: Rally's exception hierarchy, as tracks raise and catch it."""
from standin.errors import *  # noqa: F401,F403
