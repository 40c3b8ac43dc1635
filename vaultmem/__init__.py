"""vaultmem: long-term memory for AI agents as a vault of plain markdown files.

``from vaultmem import Vault`` is the library API the CLI and the MCP server share.
The import is lazy so that ``import vaultmem`` stays cheap for thin clients.
"""

from __future__ import annotations

from .core.version import VERSION as __version__

__all__ = ["Vault", "Hit", "VaultError", "__version__"]

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3 ms on every CLI call)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from .core.errors import VaultError
    from .recall.hit import Hit
    from .vault import Vault


def __getattr__(name: str) -> Any:
    if name == "Vault":
        from .vault import Vault

        return Vault
    if name == "Hit":
        from .recall.hit import Hit

        return Hit
    if name == "VaultError":
        from .core.errors import VaultError

        return VaultError
    raise AttributeError(name)
