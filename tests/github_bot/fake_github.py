"""A GitHub-API-compatible HTTP server on 127.0.0.1 for tests: the REST endpoints the bot uses,
realistic payloads with `url` fields (PyGithub follows them), pull request heads read from a real
bare git repository, every call recorded, and faults injected on demand (5xx, rate limits with
their headers, answers that arrive too late)."""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

PREFIX = "/api/v3"
TOKEN = "test-token-not-secret"  # every permission the bot's jobs ask for
ISSUES_TOKEN = "issues-write-token-not-secret"  # contents and pull requests read, issues write (the GPU job)
READ_TOKEN = "read-only-token-not-secret"  # read only

# the permission a write needs, by path (GitHub: an issue comment, reaction, label or assignee needs
# `issues: write` or `pull-requests: write`; a pull request `pull-requests: write`; a ref `contents: write`)
SCOPES = (
    (re.compile(r"/issues/"), ("issues", "pull-requests")),
    (re.compile(r"/pulls"), ("pull-requests",)),
    (re.compile(r"/git/"), ("contents",)),
    (re.compile(r"/actions/"), ("actions",)),
)


@dataclass
class Call:
    method: str
    path: str
    query: dict[str, list[str]]
    body: object
    status: int = 0


@dataclass
class Fault:
    method: str
    pattern: str
    status: int = 500
    headers: dict[str, str] = field(default_factory=dict)
    message: str = "Server Error"
    delay_s: float = 0.0  # answer this late (a client timeout); with process=True the change is made
    process: bool = False
    times: int = 1


class _Error(Exception):
    def __init__(
        self, status: int, message: str, headers: dict[str, str] | None = None, errors: list[dict] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}
        self.errors = errors  # GitHub's `errors` list of a 422 "Validation Failed"


def _validation(message: str, resource: str = "PullRequest") -> _Error:
    """A 422 as GitHub words it: "Validation Failed" with the reason in `errors`."""
    return _Error(422, "Validation Failed", errors=[{"resource": resource, "code": "custom", "message": message}])


class FakeGitHub:
    def __init__(self, repository: str, bare_repo: Path, *, default_branch: str = "main") -> None:
        self.repository = repository
        self.bare = bare_repo
        self.default_branch = default_branch
        self.permissions: dict[str, str] = {}
        # what each token may write (reads are always allowed); a write beyond it gets GitHub's 403
        self.tokens: dict[str, frozenset[str]] = {
            TOKEN: frozenset({"contents", "issues", "pull-requests", "actions"}),
            ISSUES_TOKEN: frozenset({"issues"}),
            READ_TOKEN: frozenset(),
        }
        self.user_types: dict[str, str] = {}
        self.fork_pulls: set[int] = set()
        self.issues: dict[int, dict] = {}
        self.comments: dict[int, dict] = {}
        self.pulls: dict[int, dict] = {}
        self.reactions: list[dict] = []
        self.runs: dict[int, str] = {}  # workflow run id → status (in_progress, queued, completed)
        self.drafts_supported = True  # False: a repository whose plan has no draft pull requests (422)
        self.filters_heads = True  # False: `head` is not applied (the bot must page through and check heads)
        self.assignable: set[str] | None = None  # who may be assigned (None: anyone); others are dropped
        self.teams: set[str] = set()  # team slugs that may be asked for a review
        self.calls: list[Call] = []
        self.faults: list[Fault] = []
        self._next_number = 1
        self._next_id = 1000
        self._lock = threading.RLock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    # lifecycle -------------------------------------------------------------------------------------
    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    @property
    def api_url(self) -> str:
        return self.root + PREFIX

    def __enter__(self) -> FakeGitHub:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    # test helpers ----------------------------------------------------------------------------------
    def inject(self, method: str, pattern: str, **kwargs: object) -> Fault:
        fault = Fault(method=method, pattern=pattern, **kwargs)  # type: ignore[arg-type]
        with self._lock:
            self.faults.append(fault)
        return fault

    def open_issue(self, title: str = "an issue", *, pull: dict | None = None) -> int:
        with self._lock:
            number = self._next_number
            self._next_number += 1
            self.issues[number] = {"number": number, "title": title, "labels": [], "comments": [], "pull": pull}
            return number

    def open_pull(self, head: str, base: str = "main", *, user: str = "alice", title: str = "a change") -> int:
        """A pull request a person opened from a branch of this repository."""
        with self._lock:
            number = self.open_issue(title)
            self.pulls[number] = {
                "number": number,
                "head": head,
                "base": base,
                "title": title,
                "body": "",
                "draft": False,
                "state": "open",
                "user": user,
            }
            return number

    def add_comment(self, number: int, body: str, login: str) -> dict:
        with self._lock:
            return self._create_comment(number, body, login)

    def may_write(self, token: str, path: str) -> bool:
        for pattern, scopes in SCOPES:
            if pattern.search(path):
                return any(scope in self.tokens[token] for scope in scopes)
        return True

    def writes(self) -> list[Call]:
        return [c for c in self.calls if c.method in ("POST", "PATCH", "PUT", "DELETE")]

    def open_pulls(self) -> list[dict]:
        return [p for p in self.pulls.values() if p["state"] == "open"]

    # payloads --------------------------------------------------------------------------------------
    def _user(self, login: str) -> dict:
        return {
            "login": login,
            "id": abs(hash(login)) % 10**8,
            "type": self.user_types.get(login, "Bot" if login.endswith("[bot]") else "User"),
            "url": f"{self.api_url}/users/{login}",
            "html_url": f"{self.root}/{login}",
            "site_admin": False,
        }

    def _repo_json(self) -> dict:
        owner = self.repository.split("/")[0]
        return {
            "id": 4242,
            "name": self.repository.split("/")[1],
            "full_name": self.repository,
            "private": False,
            "owner": self._user(owner),
            "default_branch": self.default_branch,
            "url": f"{self.api_url}/repos/{self.repository}",
            "html_url": f"{self.root}/{self.repository}",
        }

    def _comment_json(self, c: dict) -> dict:
        base = f"{self.api_url}/repos/{self.repository}/issues"
        return {
            "id": c["id"],
            "node_id": f"IC_{c['id']}",
            "url": f"{base}/comments/{c['id']}",
            "html_url": f"{self.root}/{self.repository}/issues/{c['issue']}#issuecomment-{c['id']}",
            "issue_url": f"{base}/{c['issue']}",
            "body": c["body"],
            "user": self._user(c["user"]),
            "created_at": "2026-12-02T12:00:00Z",
            "updated_at": "2026-12-02T12:00:00Z",
        }

    def _branch_sha(self, branch: str) -> str | None:
        proc = subprocess.run(
            ["git", "-C", str(self.bare), "rev-parse", "--verify", "-q", f"refs/heads/{branch}"],
            capture_output=True,
            text=True,
            check=False,
        )
        return proc.stdout.strip() or None

    def _pull_json(self, p: dict) -> dict:
        owner = self.repository.split("/")[0]
        fork = p["number"] in self.fork_pulls
        head_repo = (
            dict(self._repo_json(), full_name=f"forker/{self.repository.split('/')[1]}")
            if fork
            else (self._repo_json())
        )
        api = f"{self.api_url}/repos/{self.repository}"
        return {
            "id": 90000 + p["number"],
            "number": p["number"],
            "url": f"{api}/pulls/{p['number']}",
            "html_url": f"{self.root}/{self.repository}/pull/{p['number']}",
            "issue_url": f"{api}/issues/{p['number']}",
            "state": p["state"],
            "title": p["title"],
            "body": p["body"],
            "draft": p["draft"],
            "user": self._user(p.get("user", "kernel-foundry[bot]")),
            "labels": [{"name": n, "url": f"{api}/labels/{n}"} for n in self.issues[p["number"]]["labels"]],
            "head": {
                "ref": p["head"],
                "sha": self._branch_sha(p["head"]) or p.get("head_sha", "0" * 40),
                "label": f"{owner}:{p['head']}",
                "repo": head_repo,
            },
            "base": {
                "ref": p["base"],
                "sha": self._branch_sha(p["base"]) or "0" * 40,
                "label": f"{owner}:{p['base']}",
                "repo": self._repo_json(),
            },
            "merged": False,
            "requested_reviewers": [self._user(u) for u in p.get("reviewers", [])],
            "requested_teams": [{"slug": t, "name": t} for t in p.get("team_reviewers", [])],
            "assignees": [self._user(a) for a in self.issues[p["number"]].get("assignees", [])],
        }

    def _issue_json(self, issue: dict) -> dict:
        api = f"{self.api_url}/repos/{self.repository}"
        data = {
            "id": 80000 + issue["number"],
            "number": issue["number"],
            "url": f"{api}/issues/{issue['number']}",
            "html_url": f"{self.root}/{self.repository}/issues/{issue['number']}",
            "comments_url": f"{api}/issues/{issue['number']}/comments",
            "title": issue["title"],
            "state": "open",
            "labels": [{"name": n} for n in issue["labels"]],
            "user": self._user("someone"),
            "assignees": [self._user(a) for a in issue.get("assignees", [])],
            "comments": len(issue["comments"]),
        }
        if issue["pull"] is not None or issue["number"] in self.pulls:
            data["pull_request"] = {"url": f"{api}/pulls/{issue['number']}"}
        return data

    def _create_comment(self, number: int, body: str, login: str) -> dict:
        if number not in self.issues:
            raise _Error(404, "Not Found")
        cid = self._next_id
        self._next_id += 1
        comment = {"id": cid, "issue": number, "body": body, "user": login}
        self.comments[cid] = comment
        self.issues[number]["comments"].append(cid)
        return comment

    # routing ---------------------------------------------------------------------------------------
    def handle(self, method: str, path: str, query: dict[str, list[str]], body: object) -> tuple[int, object, dict]:
        repo = f"/repos/{self.repository}"
        if path == repo and method == "GET":
            return 200, self._repo_json(), {}
        if not path.startswith(repo + "/"):
            raise _Error(404, "Not Found")
        rest = path[len(repo) :]
        if m := re.fullmatch(r"/collaborators/([^/]+)/permission", rest):
            login = m.group(1)
            perm = self.permissions.get(login, "read")
            legacy = {"maintain": "write", "triage": "read"}.get(perm, perm)
            return 200, {"permission": legacy, "role_name": perm, "user": self._user(login)}, {}
        if m := re.fullmatch(r"/issues/(\d+)", rest):
            issue = self.issues.get(int(m.group(1)))
            if issue is None:
                raise _Error(404, "Not Found")
            return 200, self._issue_json(issue), {}
        if m := re.fullmatch(r"/issues/(\d+)/comments", rest):
            number = int(m.group(1))
            if number not in self.issues:
                raise _Error(404, "Not Found")
            if method == "POST":
                text = _field(body, "body")
                return 201, self._comment_json(self._create_comment(number, text, "kernel-foundry[bot]")), {}
            ids = self.issues[number]["comments"]
            return self._page(path, query, [self._comment_json(self.comments[i]) for i in ids])
        if m := re.fullmatch(r"/issues/comments/(\d+)", rest):
            comment = self.comments.get(int(m.group(1)))
            if comment is None:
                raise _Error(404, "Not Found")
            if method == "PATCH":
                comment["body"] = _field(body, "body")
            return 200, self._comment_json(comment), {}
        if m := re.fullmatch(r"/issues/comments/(\d+)/reactions", rest):
            cid = int(m.group(1))
            if cid not in self.comments:
                raise _Error(404, "Not Found")
            content = _field(body, "content")
            if content not in ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"):
                raise _Error(422, "Validation Failed")
            existing = [r for r in self.reactions if r["comment"] == cid and r["content"] == content]
            reaction = existing[0] if existing else {"id": len(self.reactions) + 1, "comment": cid, "content": content}
            if not existing:
                self.reactions.append(reaction)
            payload = {"id": reaction["id"], "content": content, "user": self._user("kernel-foundry[bot]")}
            return (200 if existing else 201), payload, {}
        if m := re.fullmatch(r"/issues/(\d+)/labels", rest):
            issue = self.issues.get(int(m.group(1)))
            if issue is None:
                raise _Error(404, "Not Found")
            names = body if isinstance(body, list) else (body or {}).get("labels", [])
            for name in names:
                if name not in issue["labels"]:
                    issue["labels"].append(name)
            return 200, [{"name": n} for n in issue["labels"]], {}
        if m := re.fullmatch(r"/actions/runs/(\d+)(/cancel)?", rest):
            run_id = int(m.group(1))
            if run_id not in self.runs:
                raise _Error(404, "Not Found")
            if m.group(2) and method == "POST":
                if self.runs[run_id] == "completed":
                    raise _Error(409, "Cannot cancel a workflow run that is completed.")
                self.runs[run_id] = "completed"
                return 202, {}, {}
            api = f"{self.api_url}/repos/{self.repository}/actions/runs/{run_id}"
            return 200, {"id": run_id, "url": api, "cancel_url": f"{api}/cancel", "status": self.runs[run_id]}, {}
        if m := re.fullmatch(r"/git/refs?/(.+)", rest):
            return self._git_ref(method, m.group(1), body)
        if rest == "/git/refs" and method == "POST":
            ref, sha = _field(body, "ref"), _field(body, "sha")
            if not ref.startswith("refs/") or ref.count("/") < 2:
                raise _Error(422, "Reference name must start with 'refs/' and have at least two slashes.")
            if self._ref_sha(ref) is not None:
                raise _Error(422, "Reference already exists")
            self._update_ref(ref, sha)
            return 201, self._ref_json(ref.removeprefix("refs/")), {}
        if rest == "/pulls":
            if method == "POST":
                return 201, self._pull_json(self._create_pull(body)), {}
            state = query.get("state", ["open"])[0]
            head = query.get("head", [None])[0] if self.filters_heads else None
            base = query.get("base", [None])[0]
            found = [
                p
                for p in self.pulls.values()
                if (state == "all" or p["state"] == state)
                and (head is None or f"{self.repository.split('/')[0]}:{p['head']}" == head)
                and (base is None or p["base"] == base)
            ]
            # GitHub's default order: newest first (sort=created, direction=desc)
            found.sort(key=lambda p: p["number"], reverse=query.get("direction", ["desc"])[0] != "asc")
            return self._page(path, query, [self._pull_json(p) for p in found])
        if m := re.fullmatch(r"/pulls/(\d+)/requested_reviewers", rest):
            return self._request_reviewers(int(m.group(1)), method, body)
        if m := re.fullmatch(r"/issues/(\d+)/assignees", rest):
            return self._assign(int(m.group(1)), body)
        if m := re.fullmatch(r"/pulls/(\d+)", rest):
            pull = self.pulls.get(int(m.group(1)))
            if pull is None:
                raise _Error(404, "Not Found")
            if method == "PATCH":
                for key in ("title", "body", "state", "base"):
                    if isinstance(body, dict) and key in body:
                        pull[key] = body[key]
            return 200, self._pull_json(pull), {}
        raise _Error(404, "Not Found")

    def _page(self, path: str, query: dict[str, list[str]], items: list) -> tuple[int, object, dict]:
        """One page of a list, as GitHub pages: per_page (default 30, at most 100), page, and a Link header
        with rel="next" and rel="last" that keeps the other query parameters."""
        per_page = max(1, min(100, int(query.get("per_page", ["30"])[0])))
        page = max(1, int(query.get("page", ["1"])[0]))
        last = max(1, -(-len(items) // per_page))
        links = []
        kept = "".join(f"&{k}={v[0]}" for k, v in sorted(query.items()) if k not in ("page", "per_page"))
        if page < last:
            links.append(f'<{self.api_url}{path}?per_page={per_page}&page={page + 1}{kept}>; rel="next"')
            links.append(f'<{self.api_url}{path}?per_page={per_page}&page={last}{kept}>; rel="last"')
        return 200, items[(page - 1) * per_page : page * per_page], ({"Link": ", ".join(links)} if links else {})

    def _request_reviewers(self, number: int, method: str, body: object) -> tuple[int, object, dict]:
        pull = self.pulls.get(number)
        if pull is None:
            raise _Error(404, "Not Found")
        if method != "POST":
            raise _Error(404, "Not Found")
        users = list((body or {}).get("reviewers") or []) if isinstance(body, dict) else []
        teams = list((body or {}).get("team_reviewers") or []) if isinstance(body, dict) else []
        author = pull.get("user", "kernel-foundry[bot]")
        if author in users:
            raise _validation("Review cannot be requested from pull request author.")
        strangers = [
            u for u in users if self.permissions.get(u, "none") not in ("read", "triage", "write", "maintain", "admin")
        ]
        if strangers or any(t not in self.teams for t in teams):
            raise _validation(
                "Reviews may only be requested from collaborators. One or more of the users or teams you specified "
                f"is not a collaborator of the {self.repository} repository."
            )
        pull.setdefault("reviewers", [])
        pull.setdefault("team_reviewers", [])
        pull["reviewers"] += [u for u in users if u not in pull["reviewers"]]
        pull["team_reviewers"] += [t for t in teams if t not in pull["team_reviewers"]]
        return 201, self._pull_json(pull), {}

    def _assign(self, number: int, body: object) -> tuple[int, object, dict]:
        """GitHub drops, without an error, the assignees who may not be assigned; the answer lists who is."""
        issue = self.issues.get(number)
        if issue is None:
            raise _Error(404, "Not Found")
        logins = list((body or {}).get("assignees") or []) if isinstance(body, dict) else []
        issue.setdefault("assignees", [])
        for login in logins:
            ok = self.assignable is None or login in self.assignable
            if ok and login not in issue["assignees"]:
                issue["assignees"].append(login)
        return 201, self._issue_json(issue), {}

    # git refs, kept in the bare repository ---------------------------------------------------------------
    def _git(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", "-C", str(self.bare), *args], capture_output=True, text=True, check=False)

    def _ref_sha(self, ref: str) -> str | None:
        return self._git("rev-parse", "--verify", "-q", ref).stdout.strip() or None

    def _update_ref(self, ref: str, sha: str) -> None:
        if self._git("cat-file", "-e", f"{sha}^{{commit}}").returncode != 0:
            raise _Error(422, "Object does not exist")
        self._git("update-ref", ref, sha)

    def _ref_json(self, ref: str) -> dict:
        sha = self._ref_sha(f"refs/{ref}")
        api = f"{self.api_url}/repos/{self.repository}/git"
        return {
            "ref": f"refs/{ref}",
            "node_id": f"REF_{ref}",
            "url": f"{api}/refs/{ref}",
            "object": {"sha": sha, "type": "commit", "url": f"{api}/commits/{sha}"},
        }

    def _git_ref(self, method: str, ref: str, body: object) -> tuple[int, object, dict]:
        if self._ref_sha(f"refs/{ref}") is None:
            raise _Error(
                404 if method == "GET" else 422, "Not Found" if method == "GET" else "Reference does not exist"
            )
        if method == "PATCH":
            sha = _field(body, "sha")
            old = self._ref_sha(f"refs/{ref}")
            forced = isinstance(body, dict) and body.get("force") is True
            if not forced and self._git("merge-base", "--is-ancestor", str(old), sha).returncode != 0:
                raise _Error(422, "Update is not a fast forward")
            self._update_ref(f"refs/{ref}", sha)
        return 200, self._ref_json(ref), {}

    def _create_pull(self, body: object) -> dict:
        head, base, title = _field(body, "head"), _field(body, "base"), _field(body, "title")
        head = head.split(":", 1)[-1]
        if self._branch_sha(head) is None:
            raise _Error(422, "Validation Failed: head does not exist")
        if self._branch_sha(base) is None:
            raise _Error(422, "Validation Failed: base does not exist")
        for p in self.pulls.values():
            if p["head"] == head and p["state"] == "open":
                raise _Error(422, f"Validation Failed: A pull request already exists for {head}.")
        head_sha, base_sha = self._branch_sha(head), self._branch_sha(base)
        if self._git("merge-base", "--is-ancestor", str(head_sha), str(base_sha)).returncode == 0:
            raise _validation(f"No commits between {base} and {head}")  # as GitHub answers it
        if isinstance(body, dict) and body.get("draft") and not self.drafts_supported:
            raise _validation("Draft pull requests are not supported in this repository.")
        number = self.open_issue(title)
        pull = {
            "number": number,
            "head": head,
            "base": base,
            "title": title,
            "body": (body or {}).get("body", "") if isinstance(body, dict) else "",
            "draft": bool((body or {}).get("draft", False)) if isinstance(body, dict) else False,
            "state": "open",
        }
        self.pulls[number] = pull
        return pull

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _serve(self, method: str) -> None:
                url = urlparse(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except json.JSONDecodeError:
                    body = None
                path = url.path[len(PREFIX) :] if url.path.startswith(PREFIX) else url.path
                call = Call(method=method, path=path, query=parse_qs(url.query), body=body)
                with fake._lock:
                    fake.calls.append(call)
                    fault = next(
                        (f for f in fake.faults if f.times > 0 and f.method == method and re.search(f.pattern, path)),
                        None,
                    )
                    if fault is not None:
                        fault.times -= 1
                auth = self.headers.get("Authorization", "")
                token = auth.partition(" ")[2] if auth.partition(" ")[0] in ("token", "Bearer") else ""
                status, payload, headers = 200, None, {}
                try:
                    if token not in fake.tokens:
                        raise _Error(401, "Bad credentials")
                    if method != "GET" and not fake.may_write(token, path):
                        raise _Error(403, "Resource not accessible by integration")
                    if fault is not None and not fault.process:
                        raise _Error(fault.status, fault.message, fault.headers)
                    with fake._lock:
                        status, payload, headers = fake.handle(method, path, call.query, body)
                except _Error as exc:
                    status, headers = exc.status, exc.headers
                    payload = {"message": exc.message, "documentation_url": "https://docs.github.com/rest"}
                    if exc.errors:
                        payload["errors"] = exc.errors
                call.status = status
                if fault is not None and fault.delay_s:
                    time.sleep(fault.delay_s)
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json; charset=utf-8")
                    self.send_header("Content-Length", str(len(data)))
                    self.send_header("X-RateLimit-Limit", "5000")
                    self.send_header("X-RateLimit-Remaining", headers.pop("x-ratelimit-remaining", "4999"))
                    reset = headers.pop("x-ratelimit-reset", str(int(time.time()) + 3600))
                    self.send_header("X-RateLimit-Reset", reset)
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_GET(self) -> None:
                self._serve("GET")

            def do_POST(self) -> None:
                self._serve("POST")

            def do_PATCH(self) -> None:
                self._serve("PATCH")

            def do_PUT(self) -> None:
                self._serve("PUT")

            def do_DELETE(self) -> None:
                self._serve("DELETE")

        return Handler


def _field(body: object, name: str) -> str:
    if not isinstance(body, dict) or not isinstance(body.get(name), str):
        raise _Error(422, f"Validation Failed: {name} is missing")
    return body[name]
