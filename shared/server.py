"""Server bootstrap shared by every stage: health, reflection, error mapping, graceful shutdown."""

import logging
import traceback
from collections.abc import Callable, Iterable
from concurrent import futures

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2, reflection_pb2_grpc

from shared.config import ServerConfig
from shared.errors import RagmeshError
from shared.observability.interceptor import ObservabilityInterceptor
from shared.observability.metrics import start_metrics_server
from shared.observability.tracing import server_tracing, setup_tracing
from shared.stopping import stop_on_signals
from shared.tls import MTLS_STAGES, server_credentials

log = logging.getLogger("ragmesh.server")
NO_RETRY_PUSHBACK = "grpc-retry-pushback-ms"


def _aborted(context: grpc.ServicerContext) -> bool:
    """The handler already chose its status (context.abort raises a bare Exception after setting it)."""
    return context.code() not in (None, grpc.StatusCode.OK)


def _guard(stage: str, behavior, streaming: bool):
    """Map domain errors to their status; anything else becomes INTERNAL naming the stage."""

    def fail(exc: Exception, context: grpc.ServicerContext):
        if isinstance(exc, RagmeshError):
            if exc.code == grpc.StatusCode.UNAVAILABLE:
                # The handler ran (its engine or a stage behind it is down): a negative pushback tells the
                # caller's retry policy not to run it again; only calls that never reached us are retried.
                context.set_trailing_metadata(((NO_RETRY_PUSHBACK, "-1"),))
            context.abort(exc.code, exc.message)
        log.error("unhandled error in %s:\n%s", stage, traceback.format_exc())
        context.abort(grpc.StatusCode.INTERNAL, f"{stage}: internal error: {type(exc).__name__}: {exc}")

    if streaming:

        def stream(request, context):
            try:
                yield from behavior(request, context)
            except Exception as exc:  # noqa: BLE001 - mapped to a status, never swallowed
                if _aborted(context):
                    raise
                fail(exc, context)

        return stream

    def unary(request, context):
        try:
            return behavior(request, context)
        except Exception as exc:  # noqa: BLE001
            if _aborted(context):
                raise
            fail(exc, context)

    return unary


class DomainErrorInterceptor(grpc.ServerInterceptor):
    def __init__(self, stage: str):
        self._stage = stage

    def intercept_service(self, continuation, handler_call_details):
        handler = continuation(handler_call_details)
        if handler is None:
            return None
        if handler.unary_unary:
            return handler._replace(unary_unary=_guard(self._stage, handler.unary_unary, False))
        if handler.unary_stream:
            return handler._replace(unary_stream=_guard(self._stage, handler.unary_stream, True))
        return handler


class MethodAwareReflection(reflection.ReflectionServicer):
    """Server reflection that also resolves method symbols (ragmesh.v1.Gateway.Ask). Python's descriptor pool
    knows services and messages but not methods by full name, so grpcurl `describe` of a method and ghz
    (which asks for the method) failed with "Symbol not found"; a method resolves to its service's file."""

    def _file_containing_symbol(self, request, fully_qualified_name):
        service, _, method = fully_qualified_name.rpartition(".")
        try:
            if method in self._pool.FindServiceByName(service).methods_by_name:
                fully_qualified_name = service
        except KeyError:
            pass  # not Service.Method: the name is looked up as given
        return super()._file_containing_symbol(request, fully_qualified_name)


# grpcio-reflection ships only v1alpha; v1 (what grpcurl and ghz ask for first) has the same messages with the
# same field numbers under another package, so the v1alpha servicer answers both on the wire.
REFLECTION_V1 = "grpc.reflection.v1.ServerReflection"


def add_reflection(server: grpc.Server, servicer: reflection.ReflectionServicer) -> None:
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(servicer, server)
    info = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(REFLECTION_V1, {"ServerReflectionInfo": info}),)
    )


def serve_health_only(stage: str, health_servicer: health.HealthServicer, host: str, port: int) -> grpc.Server:
    """The stage's health service, and nothing else, on a plaintext port: the kubelet's gRPC probe speaks
    plaintext, while a stage behind the gateway serves only mutual TLS on its own port. It shares the
    servicer, so it reports what the stage's port does (NOT_SERVING while draining)."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix=f"{stage}-health"))
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    if server.add_insecure_port(f"{host}:{port}") == 0:
        raise SystemExit(f"{stage}: cannot bind the health port {host}:{port}")
    server.start()
    return server


def connection_age_options(seconds: float, grace: float) -> list[tuple[str, int]]:
    """gRPC's server options that end a connection after `seconds` (0: none), calls in flight given `grace`."""
    if seconds <= 0:
        return []
    return [
        ("grpc.max_connection_age_ms", int(seconds * 1000)),
        ("grpc.max_connection_age_grace_ms", int(grace * 1000)),
    ]


def serve(
    stage: str,
    config: ServerConfig,
    register: Callable[[grpc.Server], Iterable[str]],
    interceptors: Iterable[grpc.ServerInterceptor] = (),
) -> None:
    """Run one stage until SIGTERM/SIGINT; in-flight calls get `grace_seconds` to finish.

    `register` adds the servicers (after any heavy warm-up) and returns their full service names.
    """
    logging.basicConfig(level=config.log_level, format=f"%(asctime)s {stage} %(levelname)s %(name)s: %(message)s")
    provider = setup_tracing(stage)
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=config.max_workers, thread_name_prefix=stage),
        # Outermost first: the call's span and metrics see the final status the error mapping produced.
        interceptors=[server_tracing(), ObservabilityInterceptor(), DomainErrorInterceptor(stage), *interceptors],
        options=[
            ("grpc.max_receive_message_length", 64 * 1024 * 1024),
            ("grpc.max_send_message_length", 64 * 1024 * 1024),
            *connection_age_options(config.max_connection_age_seconds, config.grace_seconds),
        ],
    )
    health_servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    names = list(register(server))
    service_names = [*names, health.SERVICE_NAME, REFLECTION_V1, reflection.SERVICE_NAME]
    add_reflection(server, MethodAwareReflection(service_names))
    address = f"{config.host}:{config.port}"
    if config.tls_dir and stage in MTLS_STAGES:
        # Only callers holding a certificate from the mesh's CA get in (the gateway, the launcher's health checks).
        port = server.add_secure_port(address, server_credentials(config.tls_dir, stage))
        log.info("%s: mutual TLS with the CA in %s", stage, config.tls_dir)
    else:
        port = server.add_insecure_port(address)
    if port == 0:
        raise SystemExit(f"{stage}: cannot bind {config.host}:{config.port}")

    # The handler only sets a flag and the main thread drains. A handler that stopped the server itself hung when a
    # second signal came during the first one's `server.stop` (the terminal's SIGINT and the launcher's SIGTERM
    # after a Ctrl-C): the second ran inside grpc's stop, which holds the server's lock, and waited for a shutdown
    # that the server's thread could only finish with that lock. Two SIGTERMs back to back hung the chunker 4 runs
    # in 8 until the launcher's SIGKILL.
    stopped = stop_on_signals()
    start_metrics_server(stage, config.host, config.metrics_port)
    server.start()
    health_server = None
    if config.health_port:
        health_server = serve_health_only(stage, health_servicer, config.host, config.health_port)
    for name in ["", *names]:
        health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    log.info("%s listening on %s:%d", stage, config.host, port)
    print(f"ragmesh {stage} listening on {config.host}:{port}", flush=True)
    while not stopped.wait(0.5):
        pass
    log.info("%s: stopping, draining for up to %.0fs", stage, config.grace_seconds)
    health_servicer.enter_graceful_shutdown()
    server.stop(config.grace_seconds).wait()
    if health_server is not None:
        health_server.stop(0)
    provider.shutdown()  # flush spans still in the batch
    log.info("%s stopped", stage)
