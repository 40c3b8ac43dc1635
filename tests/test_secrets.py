"""core.secrets: secrets found and replaced whole, near-misses left alone, private spans dropped.

Every token here is generated (random, the right shape, never real); the file holds no literal
secret. A positive passes when its kind is reported, no fragment of the secret survives, the
marker is there and redacting again finds nothing; a near-miss passes when nothing is found.
"""

from __future__ import annotations

import base64
import json
import random
import string
import subprocess
import sys

import pytest

from vaultmem.core import secrets as S

rng = random.Random(20261124)
UP, LO, DG = string.ascii_uppercase, string.ascii_lowercase, string.digits
AN = UP + LO + DG
B64, B64URL = AN + "+/", AN + "-_"


def rnd(n: int, alphabet: str = AN) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def b64url(obj: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


def b64line() -> str:
    return base64.b64encode(bytes(rng.randrange(256) for _ in range(48))).decode()


def pem(label: str, lines: int = 8) -> tuple[str, list[str]]:
    body = [b64line() for _ in range(lines)]
    return f"-----BEGIN {label}-----\n" + "\n".join(body) + f"\n-----END {label}-----", body


aws_id, aws_secret = "AKIA" + rnd(16, UP + DG), rnd(40, AN + "/+")
ghp, gho, gh_pat = "ghp_" + rnd(36), "gho_" + rnd(36), "github_pat_" + rnd(22) + "_" + rnd(59)
slack_bot = f"xoxb-{rnd(12, DG)}-{rnd(13, DG)}-{rnd(24, LO + DG)}"
slack_hook = f"https://hooks.slack.com/services/T{rnd(8, UP + DG)}/B{rnd(8, UP + DG)}/{rnd(24)}"
stripe_live, stripe_long, stripe_test = "sk_live_" + rnd(24), "sk_live_51" + rnd(97), "sk_test_" + rnd(24)
stripe_rk, whsec = "rk_live_" + rnd(30), "whsec_" + rnd(32)
openai_legacy = "sk-" + rnd(20) + "T3BlbkFJ" + rnd(20)
openai_proj = "sk-proj-" + rnd(74, AN + "-_") + "T3BlbkFJ" + rnd(74, AN + "-_")
anthropic = "sk-ant-api03-" + rnd(93, AN + "-_") + "AA"
sk_live_dash = "sk-live-" + rnd(32)
jwt = ".".join(
    [
        b64url({"alg": "HS256", "typ": "JWT"}),
        b64url({"sub": rnd(8, DG), "iat": 1730000000}),
        rnd(43, AN + "-_"),
    ]
)
opaque, api_key, client_secret = rnd(40, AN + "-_"), rnd(32), rnd(40, AN + "~_-")
basic_pw, pg_pw = rnd(14), "S3cr3t!" + rnd(6) + "&x"
google, hf_tok, npm_tok = "AIza" + rnd(35, AN + "-_"), "hf_" + rnd(34, UP + LO), "npm_" + rnd(36)
sendgrid = "SG." + rnd(22, AN + "-_") + "." + rnd(43, AN + "-_")
hmac_env, quoted_blob, query_tok = rnd(44, AN + "+/"), rnd(48, AN + "+/"), rnd(36)
rsa_pem, rsa_body = pem("RSA PRIVATE KEY")
ossh_pem, ossh_body = pem("OPENSSH PRIVATE KEY", 6)
pkcs8_enc, pkcs8_body = pem("ENCRYPTED PRIVATE KEY", 5)
trunc_body, putty_priv = [b64line() for _ in range(4)], [b64line() for _ in range(3)]
basic_hdr = base64.b64encode(f"admin:{rnd(12)}".encode()).decode()
pw_md, pw_is = "Xk9#mQ2p" + rnd(4), "Tr0ub4dor&" + rnd(3, DG)
mysql_pw, cli_pw, redis_pw = "My5ql" + rnd(8), rnd(10, LO) + rnd(3, DG), rnd(14)
shpat, dop, cookie = "shpat_" + rnd(32, "0123456789abcdef"), "dop_v1_" + rnd(64, "0123456789abcdef"), rnd(32)

# (name, text, expected kind, fragments that must not survive)
POSITIVE = [
    ("aws access key id", f"AWS_ACCESS_KEY_ID={aws_id}", "aws-key", [aws_id]),
    ("aws secret quoted", f'aws_secret_access_key = "{aws_secret}"', "aws-key", [aws_secret]),
    ("github ghp in prose", f"I pushed with {ghp} as the token.", "github-token", [ghp]),
    ("github gho in code", f"`gh auth login --with-token <<< {gho}`", "github-token", [gho]),
    ("github fine-grained pat", f"GH_TOKEN={gh_pat}", "github-token", [gh_pat]),
    ("slack bot token", f"slack bot token: {slack_bot}", "slack-token", [slack_bot]),
    (
        "slack webhook url",
        f"Alerts post to {slack_hook} today.",
        "slack-token",
        [slack_hook.rsplit("/", 1)[1]],
    ),
    (
        "stripe live key",
        f"Set STRIPE_SECRET_KEY to {stripe_live} in Fly secrets.",
        "stripe-key",
        [stripe_live],
    ),
    (
        "stripe long live key",
        f'stripe.api_key = "{stripe_long}"',
        "stripe-key",
        [stripe_long, stripe_long[-40:]],
    ),
    ("stripe test key", f"Test mode key {stripe_test}", "stripe-key", [stripe_test]),
    ("stripe restricted key", f"- restricted: {stripe_rk}", "stripe-key", [stripe_rk]),
    ("stripe webhook secret", f"STRIPE_WEBHOOK_SECRET={whsec}", "stripe-key", [whsec]),
    ("openai legacy key", f"OPENAI_API_KEY={openai_legacy}", "openai-key", [openai_legacy]),
    (
        "openai project key",
        f"The agent used {openai_proj} for it.",
        "openai-key",
        [openai_proj, openai_proj[-60:]],
    ),
    (
        "anthropic key",
        f'export ANTHROPIC_API_KEY="{anthropic}"',
        "anthropic-key",
        [anthropic, anthropic[-50:]],
    ),
    ("generic sk-live- key", f"vendor key is {sk_live_dash}", "api-key", [sk_live_dash]),
    ("jwt in prose", f"The cookie held {jwt}.", "jwt", [jwt, jwt.rsplit(".", 1)[1]]),
    ("bearer jwt header", f"Authorization: Bearer {jwt}", "jwt", [jwt]),
    (
        "bearer opaque header",
        f'curl -H "Authorization: Bearer {opaque}" https://api.example.com',
        "bearer-token",
        [opaque],
    ),
    ("bearer without header", f"send it as Bearer {opaque}", "bearer-token", [opaque]),
    ("basic auth header", f"Authorization: Basic {basic_hdr}", "basic-auth", [basic_hdr]),
    (
        "basic-auth url",
        f"Clone from https://deploy:{basic_pw}@git.example.com/app.git",
        "basic-auth",
        [basic_pw],
    ),
    (
        "basic-auth url, sub-delims",
        f"DATABASE_URL=postgres://app:{pg_pw}@db.internal:5432/tide",
        "basic-auth",
        [pg_pw],
    ),
    ("curl -u user:pass", f"curl -u admin:{pw_md} https://api.example.com/health", "basic-auth", [pw_md]),
    ("PGPASSWORD env", f"PGPASSWORD={pw_is} psql -h db -U app", "password", [pw_is]),
    ("DBPASS env", f"DBPASS={pw_md}", "password", [pw_md]),
    (
        ".env block",
        f"# .env\nDEBUG=false\nDATABASE_URL=postgres://app:{basic_pw}@db:5432/app\nSECRET_KEY={api_key}\n",
        "basic-auth",
        [basic_pw, api_key],
    ),  # fmt: skip
    ("password env", "DB_PASSWORD=hunter2!" + rnd(3, DG), "password", ["hunter2!"]),
    (
        "password json with spaces",
        '{"user": "ana", "password": "correct horse battery staple"}',
        "password",
        ["correct horse battery staple"],
    ),  # fmt: skip
    ("password yaml", f"  password: {pw_is}", "password", [pw_is]),
    ("password markdown bold", f"**Password:** {pw_md}", "password", [pw_md]),
    ("password in prose, backticks", f"The staging DB password is `{pw_is}` for now.", "password", [pw_is]),
    ("password cli flag", f"mysql --password={pw_md} -u root", "password", [pw_md]),
    ("api key env", f"API_KEY={api_key}", "high-entropy", [api_key]),
    ("x-api-key header", f"X-Api-Key: {api_key}", "high-entropy", [api_key]),
    ("client secret yaml quoted", f'client_secret: "{client_secret}"', "high-entropy", [client_secret]),
    (
        "token in query string",
        f"GET https://api.example.com/v1/items?access_token={query_tok}&page=2",
        "url-secret",
        [query_tok],
    ),  # fmt: skip
    ("keyword-free env var", f"export PROD_HMAC={hmac_env}", "high-entropy", [hmac_env]),
    ("quoted high-entropy json", f'{{"signature": "{quoted_blob}"}}', "high-entropy", [quoted_blob]),
    ("google api key", f"maps key {google}", "google-api-key", [google]),
    ("sendgrid key", f"SENDGRID={sendgrid}", "sendgrid-key", [sendgrid]),
    ("npm token", f"//registry.npmjs.org/:_authToken={npm_tok}", "npm-token", [npm_tok]),
    ("huggingface token", f"HF token {hf_tok} pasted", "huggingface-token", [hf_tok]),
    (
        "rsa private key block",
        f"Key for the box:\n\n```\n{rsa_pem}\n```\nRotate it.",
        "private-key",
        rsa_body + ["END RSA"],
    ),
    ("openssh private key block", f"{ossh_pem}\n", "private-key", ossh_body),
    ("encrypted pkcs8 key block", f"> {pkcs8_enc}", "private-key", pkcs8_body),
    (
        "truncated pem (no END)",
        "-----BEGIN PRIVATE KEY-----\n" + "\n".join(trunc_body) + "\n\n(paste was cut off)",
        "private-key",
        trunc_body,
    ),  # fmt: skip
    (
        "putty key file",
        "PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\nComment: k\nPrivate-Lines: 3\n"
        + "\n".join(putty_priv)
        + "\nPrivate-MAC: "
        + rnd(40, "0123456789abcdef"),
        "private-key",
        putty_priv,
    ),  # fmt: skip
    ("two secrets, two lines", f"a: {ghp}\nb:\nSTRIPE={stripe_live}", "stripe-key", [ghp, stripe_live]),
    (
        "mysql -p attached",
        f"ran `mysql -u root -p{mysql_pw} -h db.internal shop` twice",
        "password",
        [mysql_pw],
    ),
    ("mysql -p quoted", f"mysqldump -uroot -p'{cli_pw} x' shop > d.sql", "password", [cli_pw]),
    ("sshpass -p", f"sshpass -p '{cli_pw}' ssh deploy@web1", "password", [cli_pw]),
    ("docker login -p", f"docker login -u ci -p {cli_pw} registry.example.com", "password", [cli_pw]),
    ("docker login --password", f"docker login --password {mysql_pw} ghcr.io", "password", [mysql_pw]),
    ("redis-cli -a", f"redis-cli -h cache -a {mysql_pw} ping", "password", [mysql_pw]),
    ("--password flag", f"./deploy --db-password {mysql_pw} --yes", "password", [mysql_pw]),
    (
        "aws secret in prose",
        f"The AWS secret key is {aws_secret} for the backup user.",
        "aws-key",
        [aws_secret],
    ),
    (
        "redis url empty user",
        f"REDIS_URL is redis://:{redis_pw}@cache.internal:6379/0",
        "basic-auth",
        [redis_pw],
    ),
    ("shopify token", f"the shop admin token {shpat} works", "shopify-token", [shpat]),
    ("digitalocean token", f"doctl auth init -t {dop}", "digitalocean-token", [dop]),
    ("first cookie value", f"Cookie: session={cookie}; theme=dark", "cookie", [cookie]),
    ("curl -b cookie", f"curl -b 'sid={cookie}' https://app.example.com", "cookie", [cookie]),
]

# issue 48: the shapes of secrets in URLs and prose that were missed (an Azure SAS signature, "the root
# pw is X", a passcode, a PIN, a connection string's key, presigned URLs, prefixed tokens, a password
# told in German, French or Spanish, an armored key, a password hash)
sas_sig, gcs_sig = rnd(43, B64) + "%3D", rnd(64, "0123456789abcdef")
conn_key, age = rnd(43, B64) + "=", "AGE-SECRET-KEY-1" + rnd(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")
hvs, ya29 = "hvs." + rnd(40, B64URL), "ya29." + rnd(60, B64URL)
mailgun, sentry = "key-" + rnd(32, "0123456789abcdef"), rnd(32, "0123456789abcdef")
hook = f"{rnd(18, '0123456789')}/{rnd(68, B64URL)}"
k8s = "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlF" + rnd(120, B64.replace("+", "").replace("/", ""))
apr1 = "$apr1$" + rnd(8, B64URL) + "$" + rnd(22, B64URL)
POSITIVE += [
    ("azure sas sig in a url", f"upload to https://acct.blob.core.windows.net/c/f?sv=2022-11-02&sp=rw&sig={sas_sig}",
     "url-secret", [sas_sig]),
    ("gcs signed url", f"https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Signature={gcs_sig}",
     "url-secret", [gcs_sig]),
    ("root pw in prose", "the root pw is Tr0ub4dor&3 until Friday", "password", ["Tr0ub4dor&3"]),
    ("password without a verb", "ssh into prod as deploy, password Winter2025!", "password", ["Winter2025!"]),
    ("passcode", "the door passcode is 482913", "pin", ["482913"]),
    ("card pin", "the card PIN is 4829.", "pin", ["4829"]),
    ("german password", "das Root-Passwort ist Sommer2024!", "password", ["Sommer2024!"]),
    ("french password", "le mot de passe root est Soleil2024!", "password", ["Soleil2024!"]),
    ("spanish password", "la contraseña de root es Verano2024!", "password", ["Verano2024!"]),
    ("service bus connection string", f"Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;"
     f"SharedAccessKey={conn_key}", "connection-key", [conn_key]),
    ("google oauth token", f"Authorized with {ya29} today", "google-oauth-token", [ya29]),
    ("vault token", f"VAULT_TOKEN is {hvs}", "vault-token", [hvs]),
    ("age secret key", f"backup key {age}", "age-key", [age]),
    ("mailgun key", f"mailgun {mailgun}", "mailgun-key", [mailgun]),
    ("discord webhook", f"alerts go to https://discord.com/api/webhooks/{hook}", "discord-webhook", [hook]),
    ("sentry dsn", f"dsn https://{sentry}@o12345.ingest.sentry.io/67890", "sentry-dsn", [sentry]),
    ("armored key in a kubeconfig", f"client-key-data: {k8s}", "private-key", [k8s]),
    ("password hash", f"admin:{apr1}", "password-hash", [apr1]),
]  # fmt: skip

sha, sha256 = rnd(40, "0123456789abcdef"), rnd(64, "0123456789abcdef")
NEGATIVE = [
    ("commit sha in prose", f"Fixed in commit {sha} (see PR #412)."),
    ("short sha", "Reverted 3f9a2c1 after the deploy."),
    ("uuid in prose", "Booking 550e8400-e29b-41d4-a716-446655440000 was duplicated."),
    ("uuid frontmatter id", "id: 550e8400-e29b-41d4-a716-446655440000"),
    ("base64 of short word", 'The header decodes "aGVsbG8=" to hello; aGVsbG8gd29ybGQ= too.'),
    ("changelog file hash", f"- 1.4.2: sha256 {sha256} for vaultmem-1.4.2.tar.gz"),
    ("env var with hex sha", f"GIT_SHA={sha}"),
    ("docker digest", f"image: ghcr.io/acme/tide@sha256:{sha256}"),
    ("url without credentials", "See https://docs.stripe.com/webhooks#verify-events and http://localhost:8000/api?x=1."),
    ("url with @ in path", "Post at https://medium.com/@ana/offline-sync-123 and ssh://git@github.com/acme/tide.git"),
    ("url with user only", "https://ana@bitbucket.org/acme/tide.git"),
    ("db url no creds", "DATABASE_URL=postgres://localhost:5432/tidewater"),
    ("password in prose", "Reset your password from the account page; the password reset email expires."),
    ("password: prose after colon", "password: must be at least 12 characters long"),
    ("token in prose", "The token expires after 3600 seconds; refresh tokens last 30 days."),
    ("token: prose after colon", "token: expires after 1h, see [[Auth flow]]"),
    ("bearer in prose", "Bearer tokens are stored in the keychain, never in the vault."),
    ("version strings", "Upgraded to 2.31.0-rc.1, v1.12.3+build.456 and python3.11.7; node v20.11.1."),
    ("long english words", "Antidisestablishmentarianism meets pneumonoultramicroscopicsilicovolcanoconiosis."),
    ("snake_case identifiers", "Pass `settings.stripe_webhook_secret` and STRIPE_WEBHOOK_SECRET to construct_event()."),
    ("markdown table", "| name | type | note |\n|---|---|---|\n| password_hash | text | bcrypt |\n| api_key_id | uuid | fk |"),
    ("wiki-links", "See [[Use Stripe Checkout instead of Payment Elements]] and [[Project: Tidewater]]."),
    ("iso dates", "created: 2026-10-01T14:00:00Z\nupdated: 2026-10-15T09:30:00+02:00"),
    ("hex colours", "Primary #1e90ff, accent #FFF, border #0a0a0a."),
    ("frontmatter key", "key: job-leasing\nimportance: 9"),
    ("password from env (reference)", 'password=os.environ["DB_PASSWORD"]'),
    ("password template", "password: ${DB_PASSWORD}\ntoken: {{ vault_token }}"),
    ("api key placeholder", "api_key: <your-api-key>\nAuthorization: Bearer <token>"),
    ("python annotation", "def check_password(password: str, secret: Optional[str] = None) -> bool:"),
    ("max tokens", "max_tokens=4096, token_count: 1200, num_tokens = 77"),
    ("already redacted", "password: [REDACTED:password]\nAuthorization: Bearer [REDACTED:jwt]"),
    ("private key header mention", "The file must start with -----BEGIN OPENSSH PRIVATE KEY----- exactly."),
    ("email address", "Mail ops@tidewater.example or mailto:help@tidewater.example."),
    ("file path", "Installed in /usr/local/lib/python3.11/site-packages/detect_secrets/plugins."),
    ("science prose", "IL-6 and TNF-alpha rose (p<0.001; n=412); CRISPR-Cas9 knockout of BRCA1 in HEK293T."),
    ("json flags", '{"secret": true, "password_required": false, "token_ttl": 3600}'),
    ("sql line", "INSERT INTO stripe_events (id, type, received_at) ... ON CONFLICT (id) DO NOTHING"),
    ("pass as verb", "pass: 3 of 5 tests; bypass the cache; passwd file is /etc/passwd"),
    ("secret as a word", "secret: the thing is, nobody reads the runbook."),
    ("scikit-learn etc", "We use sk-learn style pipelines (scikit-learn), task-force notes and ask-me-anything."),
    ("id alphabet constant", 'ID_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"'),
    ("bypass: in a title", "Outcomes after cardiopulmonary bypass: a meta-analysis of 12 trials"),
    ("git empty tree sha", '_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"'),
    ("model path quoted", '"model": "sentence-transformers/all-MiniLM-L6-v2"'),
    ("session id in transcript json", '{"session_id": "8f14e45f-ceea-467f-a0e6-0c5b8f1d2a3b", "tokens": 18234}'),
    ("stripe webhook payload ids", '{"id": "evt_1NXWPr2eZvKYlo2C8d7Yfk3E", "data": {"object": {"id": '
     '"cs_test_a1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvWxYz", "customer": "cus_NffrFeUfNV2Hib", '
     '"payment_intent": "pi_3MtwBwLkdIwHu7ix28a3tqPa", "setup_intent": "seti_1Mm2cBLkdIwHu7ixaiKW3ElR"}}}'),
    ("quoted value under an id key", 'request_id: "Zq8fK2mP9xL4vR7tN1wB6yH3cD5eF"'),
    ("curl -u with env var", 'curl -u "$USER:$API_TOKEN" https://api.example.com and curl -u admin https://x'),
    ("aws prefix mention", "AWS access key ids start with AKIA; ours are rotated monthly."),
    ("mkdir -p and -pthread", "mkdir -p build/out && gcc -pthread -o x x.c"),
    ("mysql -p prompts", "mysql -u root -p shop (it asks for the password)"),
    ("docker login --password-stdin", 'echo "$PW" | docker login --password-stdin -u ci ghcr.io'),
    ("flag with an env var", "docker login -p $DOCKER_PASSWORD ghcr.io; ./deploy --token ${DEPLOY_TOKEN}"),
    ("aws docs url", "See https://docs.aws.amazon.com/IAM/latest/UserGuide/id_credentials_access-keys.html today"),
    ("cookie prose", "The session cookie: it expires after 1h; Cookie: theme=dark; lang=en"),
    ("url with port only", "open http://localhost:8080/ and redis://cache:6379/0"),
    ("query without secrets", "See https://example.com/?page=2&sort=asc&key=name and ?token=abc&q=x"),
    ("password manager", "the password manager is 1Password; the pw is in 1Password"),
    ("password policy", "password policy: NIST-800-63b; passcode is required; password is at least 12 characters"),
    ("pin words", "The PIN is printed on the card. pin: 3 (we pin the version). The pin is 2.31.0 here."),
    ("other languages, no value", "mot de passe oublié ? la contraseña es obligatoria; das Passwort ist falsch"),
    ("hash prefix named", "Use bcrypt hashes ($2b$ prefix) for passwords; key-value store"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "kind", "fragments"), [c[1:] for c in POSITIVE], ids=[c[0] for c in POSITIVE]
)
def test_a_secret_is_replaced_whole_by_its_kind(text, kind, fragments):
    new, findings = S.redact(text)
    assert kind in [f.kind for f in findings]
    assert f"[REDACTED:{kind}]" in new
    assert [f for f in fragments if f in new] == []
    assert S.scan(new) == []  # idempotent


@pytest.mark.parametrize("text", [c[1] for c in NEGATIVE], ids=[c[0] for c in NEGATIVE])
def test_a_near_miss_is_left_alone(text):
    assert S.scan(text) == []
    assert S.redact(text) == (text, [])


def test_the_cases_cover_twenty_kinds():
    assert len({kind for _, _, kind, _ in POSITIVE} | {"private-key", "password"}) >= 17
    found = {f.kind for _, text, _, _ in POSITIVE for f in S.scan(text)}
    assert len(found) >= 17


@pytest.mark.parametrize("text", [c[1] for c in POSITIVE + NEGATIVE][::7])
def test_the_prefilter_changes_no_result(text):
    assert S.scan_spans(text) == S.scan_spans(text, prefilter=False)


GENERATORS = {
    "aws-key": lambda: rng.choice(["AKIA", "ASIA"]) + rnd(16, UP + DG),
    "github-token": lambda: rng.choice(["ghp_", "gho_", "ghs_", "ghu_", "ghr_"]) + rnd(36),
    "slack-token": lambda: f"xox{rng.choice('bpas')}-{rnd(11, DG)}-{rnd(12, DG)}-{rnd(24, LO + DG)}",
    "stripe-key": lambda: rng.choice(["sk_live_", "rk_live_", "sk_test_"]) + rnd(rng.choice([24, 34, 99])),
    "openai-key": lambda: rng.choice(["sk-proj-", "sk-svcacct-", "sk-"]) + rnd(48),
    "anthropic-key": lambda: "sk-ant-api03-" + rnd(93, AN + "-_") + "AA",
    "jwt": lambda: ".".join(
        [b64url({"alg": "RS256", "kid": rnd(8)}), b64url({"sub": rnd(10)}), rnd(86, AN + "-_")]
    ),
    "google-api-key": lambda: "AIza" + rnd(35, AN + "-_"),
}
CONTEXTS = ["{t}", "token {t}.", "use `{t}` here", '"{t}"', "'{t}'", "KEY={t}", '{{"k": "{t}"}}', "- {t}", "({t})",
            "x {t}, y", "line1\n  {t}\nline3", "> {t}", "| a | {t} |"]  # fmt: skip


@pytest.mark.parametrize("kind", sorted(GENERATORS))
def test_generated_tokens_vanish_in_every_context(kind):
    for _ in range(8):
        tok = GENERATORS[kind]()
        for ctx in CONTEXTS:
            new, findings = S.redact(ctx.format(t=tok))
            assert kind in [f.kind for f in findings], ctx
            assert not any(tok[i : i + 12] in new for i in range(0, len(tok) - 12, 6)), new


def test_findings_carry_kind_and_line_never_the_value():
    findings = S.scan(f"intro\n\nkey {ghp}\nAWS_ACCESS_KEY_ID={aws_id}\n")
    assert [(f.kind, f.line) for f in findings] == [("github-token", 3), ("aws-key", 4)]
    assert all(ghp not in str(f) for f in findings)


def test_a_title_keeps_a_name_safe_marker():
    assert S.redact_title(f"Deploy with {ghp} failed") == "Deploy with redacted-github-token failed"
    assert S.redact_title("Use SQLite for the cache") == "Use SQLite for the cache"


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("a <private>secret plan</private> b", "a  b"),
        ("x <PRIVATE>one\ntwo</Private> y", "x  y"),
        ("nested <private>a <private>b</private> c</private> end", "nested  end"),
        ("cut-off <private>everything after", "cut-off "),
        ("stray </private> close", "stray  close"),
        ('with attrs <private reason="x">p</private>.', "with attrs ."),
        ("< private >spaced</ private > ok", " ok"),
        ("nothing private here", "nothing private here"),
        ("a privateer <privately> stays", "a privateer <privately> stays"),
    ],
)
def test_private_spans_are_dropped(text, kept):
    assert S.strip_private(text) == kept


def test_importing_the_module_or_stripping_loads_no_detector():
    code = ("import sys; from vaultmem.core import secrets as s; s.strip_private('<private>x</private>');"
            "print('detect_secrets' in sys.modules, 'requests' in sys.modules)")  # fmt: skip
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        == "False False\n"
    )


@pytest.mark.parametrize(
    "text",
    ["eyJ" * 70_000, "ghp_" * 50_000, "-----BEGIN PRIVATE KEY-----\n" * 20_000, "PuTTY-User-Key-File-2: x\n" * 20_000,
     "sk-" * 70_000, "//" * 50_000 + "_authToken", "password=" * 25_000],
    ids=["jwt-prefix", "github-prefix", "pem-begins", "putty-headers", "sk-run", "npm-slashes", "assignments"],
)  # fmt: skip
def test_hostile_text_costs_bounded_time(text):
    """Runs of token prefixes made several detectors backtrack from every start (quadratic: minutes
    for 200 KB); each detector now sees at most a 4 KB window and PEM ends are found once."""
    import time

    start = time.monotonic()
    S.scan(text)
    assert time.monotonic() - start < 10


def test_a_token_cut_by_a_window_is_still_redacted_whole():
    long_line = "x " * 2_100 + ghp + " " + "y" * 10 + jwt + "z " * 3_000
    new, findings = S.redact(long_line)
    assert ghp not in new and jwt.rsplit(".", 1)[1] not in new
    assert {"github-token", "jwt"} <= {f.kind for f in findings}


def test_the_prompt_hook_path_loads_no_detector():
    """`hook prompt` runs before every prompt: it strips private spans (core.private) and fences
    (core.fence) but never loads the detector, detect-secrets or requests."""
    code = ("import sys, vaultmem.cli.main, vaultmem.agents.hook_io, vaultmem.agents.hooks; print(sorted(m for m in "
            "sys.modules if m in ('vaultmem.core.secrets', 'detect_secrets', 'requests')))")  # fmt: skip
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        == "[]\n"
    )
