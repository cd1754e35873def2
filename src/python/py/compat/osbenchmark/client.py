"""osbenchmark.client: the request context a runner marks its requests' start and end in.
runner times a call around the runner where the client keeps no context, so the marks are
kept but not needed."""
import contextvars
import time


class RequestContextHolder:
    request_context = contextvars.ContextVar("runner_standin_request_context")

    def new_request_context(self):
        holder = self

        class Manager:
            def __enter__(self):
                self.ctx, self.token = holder.init_request_context()
                return self

            def __exit__(self, exc_type, exc, tb):
                holder.restore_context(self.token)
                return False

            @property
            def request_start(self):
                return self.ctx.get("request_start")

            @property
            def request_end(self):
                ends = self.ctx.get("request_end_list")
                return max(ends) if ends else None

        return Manager()

    @classmethod
    def init_request_context(cls):
        ctx = {}
        return ctx, cls.request_context.set(ctx)

    @classmethod
    def restore_context(cls, token):
        cls.request_context.reset(token)

    @classmethod
    def _meta(cls):
        return cls.request_context.get(None)

    @classmethod
    def on_client_request_start(cls):
        meta = cls._meta()
        if meta is not None:
            meta.setdefault("client_request_start", time.perf_counter())

    @classmethod
    def on_client_request_end(cls):
        meta = cls._meta()
        if meta is not None:
            meta["client_request_end"] = time.perf_counter()

    @classmethod
    def on_request_start(cls):
        meta = cls._meta()
        if meta is not None and "request_start" not in meta:
            meta["request_start"] = time.perf_counter()

    @classmethod
    def on_request_end(cls):
        meta = cls._meta()
        if meta is not None:
            meta.setdefault("request_end_list", []).append(time.perf_counter())
