"""CLI commands for agent integration (`vaultmem mcp`, `vaultmem setup`), registered on the app.

The pattern of every command module: import the app and options from ``cli_common``, the
routing from ``api``; ``cli.py`` imports this module so its commands are part of the app.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
import typer.core

from ..api import vault_root
from ..core import environment
from ..core.errors import BadInput, VaultError
from .common import AgentOpt, JsonOpt, VaultOpt, app, echo_json, err


class McpCommand(typer.core.TyperCommand):
    """`vaultmem mcp --help` names the tools the server has, read from it when help is shown
    (the MCP package loads only then)."""

    def format_help(self, ctx, formatter):
        try:
            from ..agents.mcp_server import tool_names

            tools = ", ".join(tool_names())
        except ImportError:
            tools = "(the mcp package is not installed)"
        self.help = (self.help or "").replace("{tools}", tools)
        super().format_help(ctx, formatter)


@app.command(cls=McpCommand)
def mcp(
    vault: VaultOpt = None,
    http: Annotated[
        bool, typer.Option("--http", help="Serve streamable HTTP on 127.0.0.1 instead of stdio.")
    ] = False,
    port: Annotated[int, typer.Option(help="Port for --http.")] = 8765,
    no_token: Annotated[
        bool,
        typer.Option(
            "--no-token",
            help="--http without the access token: any local user could then read and write the vault.",
        ),
    ] = False,
    agent: AgentOpt = None,
) -> None:
    """Serve the vault's memory to an agent over MCP (stdio by default; --http listens on
    127.0.0.1 only). Tools: {tools}; resource memory://{id}.

    Over --http every request must carry your access token (`vaultmem setup` prints it):
    header "Authorization: Bearer TOKEN".
    With --agent (or $VAULTMEM_AGENT_ID) the server serves that agent's personal vault plus the
    shared and the user's vault, and refuses every other vault.
    Example: vaultmem mcp --vault ~/memory      vaultmem mcp --agent alice
    """
    from ..core.registry import agent_id

    agent = agent_id(agent)
    root = (
        None if agent and not vault else vault_root(vault)
    )  # a missing vault: one line, before any protocol traffic
    try:
        from ..agents.mcp_server import serve
    except ImportError as e:
        raise VaultError(f"the MCP server needs the mcp package ({e}); pip install 'mcp>=2.3,<3'") from None
    token = None
    if http and not no_token:
        from ..core.auth import token as access_token
        from ..core.auth import token_path

        token = access_token()
    if http:
        guard = (
            f"requests need the access token in {token_path()}"
            if token
            else "NO access token: any local user can use it"
        )
        err(f"serving {root or 'agent ' + str(agent)} on http://127.0.0.1:{port}/mcp ({guard}); Ctrl-C stops")
    serve(root, http=http, port=port, agent=agent if not vault else None, token=token)


@app.command()
def setup(
    agent: Annotated[str, typer.Argument(help="claude, codex, cursor, gemini or copilot.")],
    vault: VaultOpt = None,
    write: Annotated[
        bool,
        typer.Option(
            "--write",
            help="Merge the MCP server entry and the hooks into the agent's config files (backups kept, other entries untouched).",
        ),
    ] = False,
    user: Annotated[
        bool,
        typer.Option(
            "--user",
            help="The agent's user-level files (e.g. ~/.gemini/settings.json) instead of the project's.",
        ),
    ] = False,
    config: Annotated[
        Path | None, typer.Option("--config", help="The agent's MCP config file (default: its usual place).")
    ] = None,
    http: Annotated[
        bool,
        typer.Option(
            "--http",
            help="Connect to `vaultmem mcp --http` (with your access token) instead of starting it over stdio.",
        ),
    ] = False,
    port: Annotated[int, typer.Option(help="Port of `vaultmem mcp --http`.")] = 8765,
    remove: Annotated[
        bool,
        typer.Option(
            "--remove", help="Undo what --write added (a file unchanged since gets its old text back)."
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Print what an agent needs to use this vault: the MCP server entry, the session hooks and
    the instructions for its rules file, each command with the absolute path of this vaultmem.
    Writes nothing unless --write.

    Example: vaultmem setup claude --vault ~/memory   |   vaultmem setup gemini --write --user
    """
    from ..agents import setups as agents

    root = vault_root(vault)
    from ..core.auth import token, token_path

    url = f"http://127.0.0.1:{port}/mcp"
    plan = agents.plan(agent.lower(), root, environment.home(), Path.cwd(), config, (url, token()) if http else None,
                       user=user, command=agents.executable())  # fmt: skip
    if remove:
        if write:
            raise BadInput("--write and --remove: choose one")
        _removed(agents.remove_plan(plan), as_json)
        return
    result, hooks = agents.write_plan(plan) if write else (None, None)
    if as_json:
        echo_json({**plan.as_dict(), "written": result, "hooks_written": hooks})
        return
    typer.echo(agents.render(plan))
    if http:
        typer.echo(f"access token for `vaultmem mcp --http` (kept in {token_path()}): {token()}")
    if result is None:
        typer.echo(
            f"(nothing written; `vaultmem setup {plan.agent} --write` merges the MCP entry into {plan.config_path} "
            f"and the hooks into {plan.hooks_path})"
        )
    elif result["changed"]:
        backup = f" (backup: {result['backup']})" if result["backup"] else ""
        typer.echo(f"merged the vaultmem server into {result['path']}{backup}")
    else:
        typer.echo(f"{result['path']} already has this vaultmem server; nothing written")
    if hooks is not None and hooks["changed"]:
        backup = f" (backup: {hooks['backup']})" if hooks["backup"] else ""
        typer.echo(f"merged the vaultmem hooks into {hooks['path']}{backup}")
    elif hooks is not None:
        typer.echo(f"{hooks['path']} already has these vaultmem hooks; nothing written")


def _removed(results: list[dict], as_json: bool) -> None:
    """What ``setup --remove`` did, file by file."""
    if as_json:
        echo_json({"removed": results})
        return
    said = {"restored": "restored as it was before --write", "deleted": "deleted (--write had created it)",
            "edited": "vaultmem's entry and hooks taken out", "missing": "not there; nothing to do",
            "nothing of vaultmem": "holds nothing of vaultmem; left alone"}  # fmt: skip
    for r in results:
        typer.echo(f"{r['path']}: {said[r['how']]}")
