"""Who can read what a document is filed under: a document stated under an access scope that no active key of
its tenant holds is readable only by keys holding every scope ('*'). That is fail-closed but silent, and it is
what a misspelt scope does ("hr-confidental", or "HR" where the keys say "hr"). Ingest still writes the document,
and reports a warning statement naming the scope and the nearest one the tenant's keys hold."""

import difflib

from shared.keys import KeyStore
from shared.model import PUBLIC_SCOPE
from shared.names import ALL_SCOPES
from shared.stubs import common_pb2


class ScopeReaders:
    def __init__(self, store: KeyStore | None):
        self.store = store  # None with authentication off: there are no keys to compare with

    def held(self, tenant_id: str) -> set[str]:
        """The scopes named by the tenant's active keys ('*' aside: it names no scope)."""
        if self.store is None:
            return set()
        keys = [k for k in self.store.list() if k.tenant_id == tenant_id and k.status() == "active"]
        return {scope for key in keys for scope in key.scopes} - {ALL_SCOPES}

    def warnings(self, tenant_id: str, scopes, source: str) -> list[common_pb2.GovernanceStatement]:
        if self.store is None:
            return []
        unread = [s for s in scopes if s != PUBLIC_SCOPE]
        held = self.held(tenant_id) if unread else set()
        by_folded = {h.lower(): h for h in held}
        out = []
        for scope in (s for s in unread if s not in held):
            near = difflib.get_close_matches(scope.lower(), list(by_folded), n=1, cutoff=0.75)
            advice = (
                f"did you mean {by_folded[near[0]]!r}?"
                if near
                else "create a key that holds it (`ragmesh keys create --scopes`) or correct the document's scopes"
            )
            out.append(
                common_pb2.GovernanceStatement(
                    field="access_scopes",
                    value=scope,
                    evidence=f"access_scopes: [{', '.join(scopes)}]",
                    source=source,
                    outcome=(
                        f"warning: no active key of tenant {tenant_id!r} holds {scope!r}, so only keys holding every "
                        f"scope ('*') can read this document; {advice}"
                    ),
                )
            )
        return out
