"""The MCP server: tools and resource through the SDK's client.

Fast tests talk to ``build_server`` in process (small test embedder); the end-to-end session
runs ``vaultmem mcp`` in a subprocess over stdio, as an agent would (with the small hash
embedder of ``service_site``: the protocol is under test here; the model is in test_recall's).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest
from helpers import vaultmem, wait_listening
from mcp import Client, MCPError, StdioServerParameters

from vaultmem.agents.mcp_server import build_server
from vaultmem.core.memtypes import TYPES

pytestmark = pytest.mark.anyio

TOOLS = {"wake", "recall", "remember", "read_note", "write_note", "list_memories", "stats",
         "resolve", "supersede", "rate_memories", "report_gap", "checkpoint", "sleep", "history"}  # fmt: skip
ADVISORY = "yx66znwj"  # decisions/Use Postgres advisory locks for job leasing.md
FLY = "mmyygs88"  # decisions/Deploy on Fly.io in the iad region.md


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def server(demo_copy, fake_embedder):
    srv = build_server(demo_copy, fake_embedder)
    yield srv
    srv.memory.vault.close()


@pytest.fixture
def outside(tmp_path) -> Path:
    """A secret file next to (not inside) the vault."""
    path = tmp_path / "secret.md"
    path.write_text("---\ntitle: Secret\n---\n# Secret\n\ntop secret outside text\n", encoding="utf-8")
    return path


async def call(client: Client, tool: str, **args) -> tuple[bool, str, object]:
    """(is_error, text, structured result) of one tool call."""
    result = await client.call_tool(tool, args)
    text = result.content[0].text if result.content else ""
    data = result.structured_content
    if isinstance(data, dict) and set(data) == {"result"}:
        data = data["result"]
    return result.is_error, text, data


async def fails(client: Client, tool: str, **args) -> str:
    """A tool error: one clear line, no traceback."""
    is_error, text, _ = await call(client, tool, **args)
    assert is_error, text
    assert "\n" not in text.strip() and "Traceback" not in text
    return text


# ---------------------------------------------------------------------- the tool list


async def test_tools_and_descriptions_are_there(server):
    async with Client(server) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == TOOLS
        for tool in tools.values():
            assert len(tool.description or "") > 60, tool.name
        remember = tools["remember"]
        for type_ in TYPES:
            assert type_ in remember.input_schema["properties"]["type"]["description"]
        assert "supersede" in remember.description and "duplicate" in remember.description
        # similarity never supersedes: the agent is told to say so when it knows
        described = " ".join(remember.description.split())
        assert "similarity alone never supersedes" in described and "call `supersede`" in described
        assert "supersedes" in remember.input_schema["properties"]
        assert "may be outdated by" in " ".join(tools["supersede"].description.split())
        assert "start of a session" in tools["wake"].description
        assert "expected_version" in tools["write_note"].description
        assert "resolve" in client.instructions and "recall" in client.instructions
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["memory://{id}"]


# ---------------------------------------------------------------------- everyday use


async def test_recall_remember_and_lifecycle(server, demo_copy):
    async with Client(server) as client:
        is_error, text, data = await call(client, "recall", query="advisory locks job leasing", k=3)
        assert not is_error and data["results"][0]["id"] == ADVISORY
        is_error, text, _ = await call(client, "wake", anchor="Project: Tidewater")
        assert not is_error and text.startswith("[MEMORY ") and f"[{ADVISORY}]" in text
        _, _, new = await call(client, "remember", type="gotcha", title="Fly volumes are per region",
                               content="A volume lives in one region; nrt machines need their own.",
                               tags=["fly"], anchor="Project: Tidewater", source="test/agent")  # fmt: skip
        assert new["id"] and (demo_copy / new["path"]).is_file() and new["duplicate_of"] is None
        _, _, again = await call(client, "remember", type="gotcha", title="Fly volumes are per region",
                                 content="A volume lives in one region; nrt machines need their own.")  # fmt: skip
        assert again["duplicate_of"] == new["id"]
        _, _, hits = await call(client, "recall", query="fly volumes region", k=3)
        assert new["id"] in [h["id"] for h in hits["results"]]
        _, _, rows = await call(client, "list_memories", types=["gotcha"], limit=0)
        assert new["id"] in [r["id"] for r in rows]
        _, _, done = await call(client, "resolve", ref=new["id"])
        assert done["action"] == "resolved" and done["changed"]
        _, _, sup = await call(client, "supersede", old=FLY, new=ADVISORY)
        assert sup["by"] == ADVISORY
        _, _, rated = await call(client, "rate_memories", ratings=[{"id": ADVISORY, "useful": True}],
                                 gap="how to rotate the Stripe webhook secret", source="test/agent")  # fmt: skip
        assert rated["rated"][0]["id"] == ADVISORY and rated["gap_recorded"]
        assert not (await call(client, "report_gap", text="refund policy", query="refunds"))[0]
        _, _, stats = await call(client, "stats")
        assert stats["by_status"]["resolved"] >= 1
    gaps = {g["text"] for g in server.memory.vault.gaps()}
    assert {"how to rotate the Stripe webhook secret", "refund policy"} <= gaps


# ---------------------------------------------------------------------- errors


async def test_vault_errors_are_mcp_tool_errors(server):
    async with Client(server) as client:
        assert "unknown type 'musing'" in await fails(
            client, "remember", type="musing", title="x", content="y"
        )
        assert "no note 'no such memory'" in await fails(client, "read_note", ref="no such memory")
        assert "no note" in await fails(client, "resolve", ref="zzzzzzzz")
        assert "no note" in await fails(
            client, "rate_memories", ratings=[{"id": "zzzzzzzz", "useful": False}]
        )
        assert "describe the gap" in await fails(client, "report_gap", text="  ")
        with pytest.raises(MCPError, match="no note"):
            await client.read_resource("memory://zzzzzzzz")


# ---------------------------------------------------------------------- staying inside the vault


async def test_reads_refuse_paths_leading_outside(server, demo_copy, outside):
    (demo_copy / "evil.md").symlink_to(outside)
    refs = ["../secret.md", str(outside), "evil.md", "decisions/../../secret.md"]
    async with Client(server) as client:
        for ref in refs:
            text = await fails(client, "read_note", ref=ref)
            assert "outside the vault" in text or "absolute" in text, (ref, text)
            assert "top secret" not in text
        for ref in ("../secret.md", str(outside), "evil.md"):
            with pytest.raises(MCPError) as err:
                await client.read_resource("memory://" + quote(ref, safe=""))
            assert "top secret" not in str(err.value)
        body = (await client.read_resource(f"memory://{ADVISORY}")).contents[0].text
        assert body.startswith("---\nid: yx66znwj")


async def test_writes_refuse_paths_leading_outside(server, demo_copy, tmp_path, outside):
    out_dir = tmp_path / "elsewhere"
    out_dir.mkdir()
    (demo_copy / "linked").symlink_to(out_dir)
    (demo_copy / "evil.md").symlink_to(outside)
    note = "# Planted\n\nplanted text\n"
    async with Client(server) as client:
        for path in ("../planted.md", str(tmp_path / "planted.md"), "linked/planted.md", "evil.md"):
            text = await fails(client, "write_note", path=path, content=note, overwrite=True)
            assert "outside the vault" in text or "absolute" in text, (path, text)
        for path in (".vaultmem/config.toml", ".obsidian/x.md", "notes.txt", "templates/decision.md"):
            assert "not a note path" in await fails(client, "write_note", path=path, content=note)
    assert not (tmp_path / "planted.md").exists() and not list(out_dir.iterdir())
    assert "top secret" in outside.read_text(encoding="utf-8")


# ---------------------------------------------------------------------- write_note's guard


async def test_write_note_creates_and_guards_replacements(server, demo_copy):
    rel = "decisions/Use Postgres advisory locks for job leasing.md"
    file = demo_copy / rel
    async with Client(server) as client:
        _, _, created = await call(client, "write_note", path="lessons/Pin the Fly CLI version.md",
                                   content="---\ntype: lesson\n---\n# Pin the Fly CLI version\n\nflyctl 0.3 broke deploys.\n")  # fmt: skip
        assert created["created"] and created["title"] == "Pin the Fly CLI version"
        _, _, hits = await call(client, "recall", query="flyctl broke deploys", k=3)
        assert created["id"] in [h["id"] for h in hits["results"]]  # indexed right away
        assert "exists" in await fails(
            client, "write_note", path="lessons/Pin the Fly CLI version.md", content="# x\n"
        )

        _, _, note = await call(client, "read_note", ref=ADVISORY)
        version = note["version"]
        edited = note["text"].replace("importance: 8", "importance: 9")
        file.write_text(
            note["text"] + "\nA person edited this meanwhile.\n", encoding="utf-8"
        )  # behind our back
        text = await fails(client, "write_note", path=rel, content=edited, expected_version=version)
        assert "changed since you read it" in text
        assert file.read_text(encoding="utf-8").endswith("A person edited this meanwhile.\n")

        _, _, fresh = await call(client, "read_note", ref=rel)
        _, _, done = await call(client, "write_note", path=rel, content=fresh["text"] + "More.\n",
                                expected_version=fresh["version"])  # fmt: skip
        assert not done["created"] and file.read_text(encoding="utf-8").endswith("More.\n")
        assert done["version"] != fresh["version"]

        _, _, forced = await call(client, "write_note", path=rel, content=edited, overwrite=True)
        assert forced["id"] == ADVISORY and file.read_text(encoding="utf-8") == edited
        gone = await fails(
            client, "write_note", path="facts/Gone.md", content="# Gone\n", expected_version=version
        )
        assert "no longer exists" in gone and not (demo_copy / "facts/Gone.md").exists()
        assert "not a readable note" in await fails(
            client, "write_note", path="facts/bad.md", content="---\n: [\n---\nx\n"
        )


# ---------------------------------------------------------------------- over HTTP


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SITE = Path(__file__).resolve().parent / "service_site"
FAKE_MODEL = {"PYTHONPATH": os.pathsep.join([str(SITE), str(SITE.parent)]), "VAULTMEM_TEST_MODEL_DELAY": "0"}


def _vaultmem() -> str:
    script = Path(sys.executable).parent / "vaultmem"
    found = str(script) if script.exists() else shutil.which("vaultmem")
    if not found:
        pytest.skip("the vaultmem console script is not installed")
    return found


@pytest.mark.integration  # the CLI in subprocesses
async def test_http_serves_on_localhost_only(empty_vault, tmp_path):
    from mcp.client.streamable_http import (
        create_mcp_http_client,
        streamable_http_client,
    )

    from vaultmem.core import auth

    port = _free_port()
    env = {**os.environ, **FAKE_MODEL, "VAULTMEM_HOME": str(tmp_path / "home")}
    proc = subprocess.Popen([_vaultmem(), "mcp", "--vault", str(empty_vault), "--http", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)  # fmt: skip
    try:
        wait_listening(port, proc)
        os.environ["VAULTMEM_HOME"] = env["VAULTMEM_HOME"]  # the server made the token there
        try:
            headers = {"Authorization": f"Bearer {auth.token()}"}
        finally:
            del os.environ["VAULTMEM_HOME"]
        transport = streamable_http_client(
            f"http://127.0.0.1:{port}/mcp", http_client=create_mcp_http_client(headers)
        )
        async with Client(transport) as client:
            _, _, stats = await call(client, "stats")
            assert stats["notes"] == 0
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert f"http://127.0.0.1:{port}/mcp" in err
    assert re.search(rf"running on http://127\.0\.0\.1:{port}", err, re.I), err


# ---------------------------------------------------------------------- an agent's session, end to end


def _stdio(root: Path) -> Client:
    params = StdioServerParameters(
        command=_vaultmem(), args=["mcp", "--vault", str(root)], env={**os.environ, **FAKE_MODEL}
    )
    return Client(params, read_timeout_seconds=300)


@pytest.mark.integration  # the CLI in subprocesses
async def test_agent_session_end_to_end(demo_copy):
    """wake, recall, remember (naming the memory it replaces), rate; sleep; a new session's wake
    shows the handoff and not the superseded memory."""
    state = demo_copy / ".vaultmem"
    state.mkdir(exist_ok=True)
    async with _stdio(demo_copy) as agent:
        _, text, _ = await call(agent, "wake", anchor="Project: Tidewater", budget=8000)
        assert text.startswith("[MEMORY ") and f"[{FLY}]" in text
        _, _, hits = await call(
            agent, "recall", query="why did we pick postgres advisory locks over redis for job leases?", k=5
        )
        assert hits["results"][0]["id"] == ADVISORY
        _, _, new = await call(agent, "remember", type="decision", title="Deploy on Fly.io in iad with an nrt replica",
                               content="Host the API, web and workers on Fly.io with primary region iad (Ashburn) and "
                                       "add a read replica and web machines in nrt (Tokyo) for Kasumi Bay, whose "
                                       "latency from iad was about 170 ms.",
                               context=["fly.toml"], anchor="Project: Tidewater", source="claude-code/session-e2e",
                               supersedes=[FLY])  # fmt: skip
        assert FLY in [s["id"] for s in new["superseded"]], new
        _, _, rated = await call(agent, "rate_memories", ratings=[{"id": ADVISORY, "useful": True}],
                                 source="claude-code/session-e2e")  # fmt: skip
        assert rated["rated"] == [
            {"id": ADVISORY, "title": "Use Postgres advisory locks for job leasing", "useful": True}
        ]

    slept = subprocess.run(
        [_vaultmem(), "sleep", "--vault", str(demo_copy), "--json", "--anchor", "Project: Tidewater",
         "--source", "claude-code/session-e2e", "--summary", "Planned the nrt replica for Kasumi Bay.",
         "--next", "Add the nrt region to fly.toml; measure Kasumi Bay p95 latency"],
        capture_output=True, text=True, timeout=300, env={**os.environ, **FAKE_MODEL},
    )  # fmt: skip
    assert slept.returncode == 0, slept.stderr
    handoff = json.loads(slept.stdout)["handoff"]["id"]

    async with _stdio(demo_copy) as agent:
        _, text, _ = await call(agent, "wake", anchor="Project: Tidewater", budget=8000)
        assert f"[{handoff}]" in text and "Add the nrt region to fly.toml" in text
        assert f"[{new['id']}]" in text
        assert f"[{FLY}]" not in text  # superseded: gone from the block
        _, _, old = await call(agent, "read_note", ref=FLY)
        assert old["status"] == "superseded"


# ---------------------------------------------------------------------- time and truth (issue 13)


async def test_remember_with_a_key_possible_updates_and_recall_as_of(server, demo_copy):
    async with Client(server) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert (
            "possible_updates" in tools["remember"].description
            and "key" in tools["remember"].input_schema["properties"]
        )
        assert "as_of" in tools["recall"].input_schema["properties"]
        _, _, first = await call(client, "remember", type="fact", title="Staging URL", content="staging.example.com",
                                 key="staging-url", source="agent-x")  # fmt: skip
        _, _, second = await call(client, "remember", type="fact", title="Staging URL moved",
                                  content="stage.example.net since the DNS change", key="staging-url",
                                  source="agent-x")  # fmt: skip
        assert [s["id"] for s in second["superseded"]] == [first["id"]] and "possible_updates" in second
        _, _, now = await call(client, "recall", query="staging url", k=3)
        assert first["id"] not in [h["id"] for h in now["results"]]
        _, _, then = await call(client, "recall", query="staging url", k=3, as_of="2000-01-01")
        assert then["as_of"] == "2000-01-01" and then["results"] == []
        assert "--as-of" in await fails(client, "recall", query="staging url", as_of="soon")


# ---------------------------------------------------------------------- session end and history


async def test_checkpoint_sleep_and_history_as_tools(server, demo_copy):
    """An MCP agent can checkpoint, end its session and read a fact's history, as the CLI can."""
    async with Client(server) as client:
        _, _, cp = await call(client, "checkpoint", text="refund endpoint done; rounding tests fail",
                              source="agent-y/s1", anchor="Project: Tidewater")  # fmt: skip
        handoff = demo_copy / cp["path"]
        assert "refund endpoint done; rounding tests fail" in handoff.read_text()
        _, _, slept = await call(client, "sleep", summary="Built the refund endpoint.",
                                 next_steps="fix rounding; write docs", source="agent-y/s1")  # fmt: skip
        assert slept["handoff"]["id"] == cp["id"]  # the same session's handoff, finished
        text = handoff.read_text()
        assert "- fix rounding" in text and "- write docs" in text
        assert (demo_copy / slept["summary"]["path"]).is_file()
        _, wake, _ = await call(client, "wake", anchor="Project: Tidewater", budget=8000)
        assert f"[{cp['id']}]" in wake and "fix rounding" in wake
        assert "summary" in await fails(client, "sleep", summary="  ")

        _, _, one = await call(client, "remember", type="fact", title="Deploy target", content="Render",
                               key="deploy-target", source="agent-y")  # fmt: skip
        _, _, two = await call(client, "remember", type="fact", title="Deploy target moved", content="Fly.io now",
                               key="deploy-target", source="agent-y")  # fmt: skip
        _, _, hist = await call(client, "history", ref="deploy-target")
        assert [v["id"] for v in hist["versions"]] == [one["id"], two["id"]]
        assert [v["state"] for v in hist["versions"]][0] != hist["versions"][1]["state"]


async def test_recall_and_wake_leave_other_branches_out_unless_asked(server, demo_copy):
    note = demo_copy / "facts" / "Spike branch zebrafish cache.md"
    note.write_text("---\ntitle: Spike branch zebrafish cache\ntype: fact\nbranch: spike-zebrafish-zz\n---\n"
                    "The zebrafish cache lives only on the spike branch.\n", encoding="utf-8")  # fmt: skip
    async with Client(server) as client:
        _, _, hits = await call(client, "recall", query="zebrafish cache", k=5)
        assert "facts/Spike branch zebrafish cache.md" not in [h["path"] for h in hits["results"]]
        _, _, hits = await call(client, "recall", query="zebrafish cache", k=5, all_branches=True)
        assert hits["results"][0]["path"] == "facts/Spike branch zebrafish cache.md"


# ---------------------------------------------------------------------- a new user's first hour (issue 29)


async def test_importance_takes_numbers_and_words(server, demo_copy):
    async with Client(server) as client:
        is_error, text, new = await call(client, "remember", type="fact", title="Berth count",
                                         content="The marina has 42 berths.", importance=7)  # fmt: skip
        assert not is_error, text
        assert "importance: 7" in (demo_copy / new["path"]).read_text()
        is_error, text, _ = await call(client, "remember", type="fact", title="Fuel dock hours",
                                       content="The fuel dock opens at 7.", importance="high")  # fmt: skip
        assert not is_error, text
        is_error, text, rows = await call(client, "list_memories", importance=7, limit=0)
        assert not is_error, text
        assert new["id"] in [r["id"] for r in rows] and all(r["importance"] >= 7 for r in rows)
        assert "1-10" in await fails(client, "remember", type="fact", title="Bad", content="x", importance=11)


async def test_a_near_duplicate_with_the_same_title_is_not_a_second_file(server, demo_copy):
    long = (
        "Tidewater marina has 42 berths. Twelve of them take boats over 15 m. The fuel dock is not a berth."
    )
    async with Client(server) as client:
        _, _, first = await call(
            client, "remember", type="fact", title="Berth count", content=long, source="a/1"
        )
        _, _, again = await call(client, "remember", type="fact", title="Berth count", source="a/1",
                                 content="Tidewater marina has 42 berths. Twelve of them take boats over 15 m.")  # fmt: skip
        assert again["duplicate_of"] == first["id"] and again["text_added"] == []
        _, _, more = await call(client, "remember", type="fact", title="berth count", source="b/2",
                                content=f"{long} Two berths are kept for visitors.")  # fmt: skip
        assert more["duplicate_of"] == first["id"] and more["text_added"] == [
            "Two berths are kept for visitors."
        ]
        assert sorted(p.name for p in demo_copy.rglob("Berth count*.md")) == ["Berth count.md"]
        is_error, text, note = await call(client, "read_note", ref="Berth count")
        assert not is_error, text
        assert note["text"].count("42 berths") == 1 and "Two berths are kept for visitors." in note["text"]


async def test_list_memories_is_one_json_array_and_names_every_status(server):
    from vaultmem.core.note import STATUSES

    async with Client(server) as client:
        result = await client.call_tool("list_memories", {"limit": 3})
        assert len(result.content) == 1
        rows = json.loads(result.content[0].text)
        assert isinstance(rows, list) and len(rows) == 3 and result.structured_content == {"result": rows}
        tools = {t.name: t for t in (await client.list_tools()).tools}
        described = tools["list_memories"].input_schema["properties"]["statuses"]["description"]
        assert all(status in described for status in STATUSES)


def test_mcp_help_lists_the_tools_the_server_has(demo_copy, fake_embedder, capsys, monkeypatch):
    import anyio

    srv = build_server(demo_copy, fake_embedder)
    try:
        names = [t.name for t in anyio.run(srv.list_tools)]
    finally:
        srv.memory.vault.close()
    monkeypatch.setenv("COLUMNS", "300")
    out = vaultmem(capsys, "mcp", "--help")  # the console entry, in this process
    assert out.returncode == 0, out.stderr
    listed = re.search(r"Tools:(.*?);", " ".join(out.stdout.replace("│", " ").split()))
    assert listed and [n.strip() for n in listed.group(1).split(",")] == names, out.stdout


async def test_recall_rejects_an_unknown_type(server):
    async with Client(server) as client:
        assert "unknown type 'bogus'" in await fails(client, "recall", query="locks", types=["bogus"])
        is_error, text, data = await call(client, "recall", query="advisory locks", types=["decision"])
        assert not is_error and data["results"], text


async def test_rate_memories_rates_the_known_ones_and_names_the_unknown(server):
    async with Client(server) as client:
        is_error, text, done = await call(client, "rate_memories", ratings=[{"id": ADVISORY, "useful": True},
                                                                           {"id": "nosuch99", "useful": False}])  # fmt: skip
        assert not is_error, text
        assert [r["id"] for r in done["rated"]] == [ADVISORY]
        assert [u["id"] for u in done["unknown"]] == ["nosuch99"] and "nosuch99" in done["unknown"][0][
            "error"
        ]
    assert [r[0] for r in server.memory.vault.usage.dump()["ratings"]] == [ADVISORY]
