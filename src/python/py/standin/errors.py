"""Rally's exception hierarchy (OSB's is the same under other names: compat/osbenchmark), as
tracks raise and catch it."""


class RallyError(Exception):
    def __init__(self, message, cause=None):
        super().__init__(message, cause)
        self.message = message
        self.cause = cause

    def __repr__(self):
        return self.message

    def full_message(self):
        msg = str(self.message)
        nesting = 0
        current_exc = self
        while hasattr(current_exc, "cause") and current_exc.cause:
            nesting += 1
            current_exc = current_exc.cause
            if hasattr(current_exc, "message"):
                msg += "\n%s%s" % ("\t" * nesting, current_exc.message)
            else:
                msg += "\n%s%s" % ("\t" * nesting, str(current_exc))
        return msg


class LaunchError(RallyError):
    pass


class SystemSetupError(RallyError):
    pass


class RallyAssertionError(RallyError):
    pass


class RallyTaskAssertionError(RallyAssertionError):
    pass


class ConfigError(RallyError):
    pass


class DataError(RallyError):
    pass


class SupplyError(RallyError):
    pass


class BuildError(RallyError):
    pass


class InvalidSyntax(RallyError):
    pass


class InvalidName(RallyError):
    pass


class TrackConfigError(RallyError):
    pass


class NotFound(RallyError):
    pass


class NotFoundError(NotFound):
    pass


# OSB's own, and the names both keep beside these.
class InstallError(RallyError):
    pass


class ExecutorError(RallyError):
    pass


class InvalidExtensionException(RallyError):
    pass


class ConfigurationError(RallyError):
    pass


class DataStreamingError(RallyError):
    pass


class MappingsError(RallyError):
    pass
