"""What every route needs: the gateway client and the caller's API key, passed through unchanged."""

from typing import Annotated

import grpc
from fastapi import Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from ragmesh.client import RagmeshClient
from services.http.errors import HttpError

_BEARER = HTTPBearer(auto_error=False, description="The same API keys as the gRPC gateway (`ragmesh keys create`)")


def gateway(request: Request) -> RagmeshClient:
    return request.app.state.gateway


def api_key(request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Security(_BEARER)]) -> str:
    """The caller's key for the gateway, which authenticates it ('' when none is sent: the gateway then
    answers UNAUTHENTICATED). The front door never lends a key of its own."""
    if credentials is not None:
        return credentials.credentials.strip()
    if request.headers.get("authorization"):
        raise HttpError(grpc.StatusCode.UNAUTHENTICATED, "the Authorization header must read `Bearer <API key>`")
    return ""


def known_query_parameters(request: Request) -> None:
    """A query parameter the route does not take is refused, naming it, as an unknown JSON body field is: a
    misspelt `?page_sise=5` or `?tenant=acme` would otherwise be dropped and the call run without it."""
    route = request.scope.get("route")
    if route is None:
        return
    taken: set[str] = set()
    dependants = [route.dependant]  # the endpoint's own parameters and those of its dependencies
    while dependants:
        dependant = dependants.pop()
        taken |= {param.alias for param in dependant.query_params}
        dependants += dependant.dependencies
    unknown = sorted(set(request.query_params) - taken)
    if unknown:
        takes = ", ".join(sorted(taken)) or "none"
        raise HttpError(
            grpc.StatusCode.INVALID_ARGUMENT, f"query.{unknown[0]}: not a parameter of this route (it takes: {takes})"
        )
