"""A local WordPress.org for the sandbox: the update API and the downloads, on loopback.

`with UpdateServer(site, offers) as updates:` serves, on 127.0.0.1 and a free port, what WordPress and
WP-CLI ask api.wordpress.org and downloads.wordpress.org when a plugin, a theme or core is updated or
installed — the update checks (plugins, themes, core), plugin and theme information, the packages — and
writes a must-use plugin (update_router.php) that sends the sandbox's WordPress there. Only the versions
it was given exist: an update is offered where a newer version of an installed plugin or theme is in
`offers`; a core version is offered when one is given. The must-use plugin is removed on exit (a sandbox
reset removes it too: it is not one of WordPress's files).

The safe-changes tests and benchmark update real plugins, themes and core through it: one version that
works, and ones broken in the ways sites break (sandbox/sample_updates.py).
"""

from __future__ import annotations

import io
import json
import os
import pwd
import re
import shutil
import threading
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

from wp_agent.sandbox.site import SandboxSite

ROUTER = Path(__file__).with_name("update_router.php")
MU_PLUGIN = "wp-agent-update-server.php"
DOWNLOADS = "https://downloads.wordpress.org"


@dataclass(frozen=True)
class Extension:
    """One version of a plugin or theme: its files, relative to its own folder."""

    kind: str  # "plugin" | "theme"
    slug: str
    version: str
    files: Mapping[str, str]

    @property
    def package_url(self) -> str:
        return f"{DOWNLOADS}/{self.kind}/{self.slug}.{self.version}.zip"

    def zipped(self) -> bytes:
        return _zipped(self.files, folder=f"{self.slug}/")  # a package unpacks to its own folder

    def folder(self, wordpress: Path) -> Path:
        return wordpress / "wp-content" / f"{self.kind}s" / self.slug


@dataclass(frozen=True)
class CoreRelease:
    """A WordPress version to update to: the site's own core files with another version number."""

    version: str
    db_version: int | None = None  # a new database version (a major update); None: the site's own
    broken: str | None = None  # PHP put at the start of wp-settings.php's plugins loading (a broken core)

    @property
    def package_url(self) -> str:
        return f"{DOWNLOADS}/release/wordpress-{self.version}-no-content.zip"


@dataclass(frozen=True)
class Translation:
    """A language pack of WordPress itself: its files in the languages folder (`de_DE.mo`, `de_DE.l10n.php`…)."""

    language: str
    files: Mapping[str, str]

    def zipped(self) -> bytes:
        return _zipped(self.files, folder="")  # a language pack unpacks into the languages folder


@dataclass
class _Served:
    offers: dict[tuple[str, str], Extension]  # the newest version of each, offered as an update
    core: CoreRelease | None
    wordpress: Path
    translations: dict[str, Translation] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    packages: dict[str, bytes] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # Every version released, by (kind, slug, version): what `install|update --version=<v>` downloads
    # (the offers, and the versions installed on the site through `install`, as on WordPress.org).
    releases: dict[tuple[str, str, str], Extension] = field(default_factory=dict)

    def release(self, extension: Extension) -> None:
        with self.lock:
            self.releases[(extension.kind, extension.slug, extension.version)] = extension

    def newest(self, kind: str, slug: str) -> Extension | None:
        """The plugin's or theme's information: its offer, else the version released last."""
        with self.lock:
            if (kind, slug) in self.offers:
                return self.offers[(kind, slug)]
            known = [e for (k, s, _), e in self.releases.items() if (k, s) == (kind, slug)]
        return max(known, key=lambda e: _version_parts(e.version), default=None)

    def versions(self, kind: str, slug: str) -> dict[str, str]:
        with self.lock:
            return {v: e.package_url for (k, s, v), e in self.releases.items() if (k, s) == (kind, slug)}


class UpdateServer:
    """WordPress.org's update API and downloads for one sandbox, while the `with` block lasts."""

    def __init__(
        self,
        site: SandboxSite,
        offers: Iterable[Extension] = (),
        *,
        core: CoreRelease | None = None,
        translations: Iterable[Translation] = (),
    ) -> None:
        self.site = site
        offers_list = list(offers)
        self._served = _Served(
            {(e.kind, e.slug): e for e in offers_list},
            core,
            Path(site.wordpress),
            {t.language: t for t in translations},
        )
        for offer in offers_list:
            self._served.release(offer)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def requests(self) -> list[str]:
        """The paths asked so far (`/api.wordpress.org/plugins/update-check/1.1/`, a package, …)."""
        with self._served.lock:
            return list(self._served.requests)

    @property
    def mu_plugin(self) -> Path:
        return Path(self.site.wordpress) / "wp-content" / "mu-plugins" / MU_PLUGIN

    def publish(self, extension: Extension) -> None:
        """Serve this version for download (`install|update --version=<v>`), replacing what was served as
        that version; the site's files stay as they are."""
        self._served.release(extension)

    def install(self, extension: Extension) -> None:
        """Put a version of a plugin or theme on the site (as if installed earlier), files owned by the
        site's owner; what was in its folder before is replaced."""
        self.publish(extension)
        folder = extension.folder(Path(self.site.wordpress))
        shutil.rmtree(folder, ignore_errors=True)
        for relative, text in extension.files.items():
            _write_owned(folder / relative, text, self.site.owner, stop=folder.parent)

    def __enter__(self) -> UpdateServer:
        served = self._served
        handler = type("Handler", (_Handler,), {"served": served})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="update-server", daemon=True)
        self._thread.start()
        address = f"http://127.0.0.1:{self._server.server_address[1]}"
        _write_owned(
            self.mu_plugin,
            ROUTER.read_text(encoding="utf-8").replace("__SERVER__", address),
            self.site.owner,
            stop=self.mu_plugin.parent.parent,
        )
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.mu_plugin.unlink(missing_ok=True)
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


class _Handler(BaseHTTPRequestHandler):
    served: _Served
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return  # the tests read `requests`

    def do_GET(self) -> None:
        self._answer({})

    def do_HEAD(self) -> None:
        self._answer({}, head=True)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode("utf-8", "replace")
        self._answer({name: values[-1] for name, values in parse_qs(body).items()})

    def _answer(self, form: dict[str, str], *, head: bool = False) -> None:
        url = urlsplit(self.path)
        with self.served.lock:
            self.served.requests.append(url.path)
        query = {name: values[-1] for name, values in parse_qs(url.query).items()}
        found = _route(self.served, url.path, {**query, **form})
        if found is None:
            self._send(HTTPStatus.NOT_FOUND, b"", "text/plain", head)
        elif isinstance(found, bytes):
            self._send(HTTPStatus.OK, found, "application/zip", head)
        else:
            self._send(HTTPStatus.OK, json.dumps(found).encode(), "application/json", head)

    def _send(self, status: HTTPStatus, body: bytes, kind: str, head: bool) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)


_PACKAGE = re.compile(r"^/downloads\.wordpress\.org/(plugin|theme)/([a-z0-9-]+)\.([0-9][0-9a-z.\-]*)\.zip$")
_TRANSLATION = re.compile(r"^/downloads\.wordpress\.org/translation/core/[0-9.]+/([a-zA-Z_]+)\.zip$")
_CORE_PACKAGE = re.compile(r"^/downloads\.wordpress\.org/release/wordpress-([0-9.]+)-no-content\.zip$")


def _route(served: _Served, path: str, fields: dict[str, str]) -> dict[str, Any] | bytes | None:
    api = "/api.wordpress.org"
    if path == f"{api}/plugins/update-check/1.1/":
        return _plugin_updates(served, _json_field(fields, "plugins"))
    if path == f"{api}/themes/update-check/1.1/":
        return _theme_updates(served, _json_field(fields, "themes"))
    if path == f"{api}/core/version-check/1.7/":
        return {
            **_core_offers(served, fields.get("version", "")),
            "translations": _translation_updates(served, fields.get("version", "")),
        }
    if path.startswith(f"{api}/core/checksums/"):
        return {"checksums": False}
    if path == f"{api}/translations/core/1.0/":
        return _core_translations(served, fields.get("version", ""))
    if (language := _TRANSLATION.match(path)) is not None and language[1] in served.translations:
        return served.translations[language[1]].zipped()
    for kind in ("plugin", "theme"):
        if path == f"{api}/{kind}s/info/1.2/":
            slug = fields.get("request[slug]", "")
            newest = served.newest(kind, slug)
            return None if newest is None else _information(newest, served.versions(kind, slug))
    if (package := _PACKAGE.match(path)) is not None:
        with served.lock:
            extension = served.releases.get((package[1], package[2], package[3]))
        return None if extension is None else extension.zipped()
    if (release := _CORE_PACKAGE.match(path)) is not None and served.core is not None:
        return _core_package(served, served.core) if release[1] == served.core.version else None
    return None


def _json_field(fields: dict[str, str], name: str) -> dict[str, Any]:
    try:
        value = json.loads(fields.get(name, "{}"))
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _version_parts(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version))


def _newer(offered: str, installed: str) -> bool:
    return _version_parts(offered) > _version_parts(installed)


def _plugin_updates(served: _Served, sent: dict[str, Any]) -> dict[str, Any]:
    response: dict[str, Any] = {}
    for file, data in dict(sent.get("plugins") or {}).items():
        slug = file.split("/", 1)[0].removesuffix(".php")
        offer = served.offers.get(("plugin", slug))
        if offer is not None and _newer(offer.version, str(dict(data).get("Version", ""))):
            response[file] = {
                "id": f"w.org/plugins/{slug}",
                "slug": slug,
                "plugin": file,
                "new_version": offer.version,
                "url": f"https://wordpress.org/plugins/{slug}/",
                "package": offer.package_url,
            }
    return {"plugins": response, "translations": [], "no_update": {}}


def _theme_updates(served: _Served, sent: dict[str, Any]) -> dict[str, Any]:
    response: dict[str, Any] = {}
    for slug, data in dict(sent.get("themes") or {}).items():
        offer = served.offers.get(("theme", slug))
        if offer is not None and _newer(offer.version, str(dict(data).get("Version", ""))):
            response[slug] = {
                "theme": slug,
                "new_version": offer.version,
                "url": f"https://wordpress.org/themes/{slug}/",
                "package": offer.package_url,
            }
    return {"themes": response, "translations": [], "no_update": {}}


def _information(offer: Extension, versions: dict[str, str]) -> dict[str, Any]:
    return {
        "name": offer.slug,
        "slug": offer.slug,
        "version": offer.version,
        "download_link": offer.package_url,
        "versions": versions,  # what `update --minor|--patch` chooses from
        "requires": "6.0",
        "requires_php": "7.4",
    }


def _core_translations(served: _Served, version: str) -> dict[str, Any]:
    listed = [
        {
            "language": language,
            "version": version,
            "updated": "2026-12-01 00:00:00",
            "english_name": language,
            "native_name": language,
            "package": f"{DOWNLOADS}/translation/core/{version}/{language}.zip",
            "iso": {"1": language[:2]},
            "strings": {"continue": "Continue"},
        }
        for language in served.translations
    ]
    return {"translations": listed}


def _translation_updates(served: _Served, version: str) -> list[dict[str, Any]]:
    """Newer language packs of WordPress itself (what `language core update` installs)."""
    return [
        {
            "type": "core",
            "slug": "default",
            "language": language,
            "version": version,
            "updated": "2030-01-01 00:00:00",  # newer than any pack a site has
            "package": f"{DOWNLOADS}/translation/core/{version}/{language}.zip",
            "autoupdate": False,
        }
        for language in served.translations
    ]


def _core_offers(served: _Served, installed: str) -> dict[str, Any]:
    core = served.core
    if core is None or not _newer(core.version, installed):
        return {"offers": [], "translations": []}
    package = core.package_url
    offer = {
        "response": "upgrade",
        "download": package,
        "locale": "en_US",
        "packages": {
            "full": package,
            "no_content": package,
            "new_bundled": "",
            "partial": "",
            "rollback": "",
        },
        "current": core.version,
        "version": core.version,
        "php_version": "7.4",
        "mysql_version": "5.5.5",
        "new_bundled": "",
        "partial_version": "",
    }
    return {"offers": [offer], "translations": []}


# Core files a no-content package holds: everything of WordPress's own but wp-content and the configuration.
_NOT_IN_CORE_PACKAGE = ("wp-content/", "wp-config.php")


def _core_package(served: _Served, core: CoreRelease) -> bytes:
    with served.lock:
        cached = served.packages.get(core.version)
    if cached is not None:
        return cached
    root = served.wordpress
    buffer = io.BytesIO()
    # Stored, not compressed: the files are read back at once on the same machine.
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for path in sorted(root.rglob("*")):
            relative = path.relative_to(root).as_posix()
            if path.is_dir() or relative.startswith(_NOT_IN_CORE_PACKAGE):
                continue
            data = path.read_bytes()
            if relative == "wp-includes/version.php":
                data = _versioned(data.decode("utf-8"), core).encode("utf-8")
            elif relative == "wp-settings.php" and core.broken is not None:
                data = (
                    data.decode("utf-8")
                    .replace("// Load active plugins.", f"{core.broken}\n// Load active plugins.", 1)
                    .encode("utf-8")
                )
            archive.writestr(f"wordpress/{relative}", data)
    package = buffer.getvalue()
    with served.lock:
        served.packages[core.version] = package
    return package


def _versioned(text: str, core: CoreRelease) -> str:
    text = re.sub(r"\$wp_version = '[^']*';", f"$wp_version = '{core.version}';", text, count=1)
    if core.db_version is not None:
        text = re.sub(r"\$wp_db_version = \d+;", f"$wp_db_version = {core.db_version};", text, count=1)
    return text


def _zipped(files: Mapping[str, str], *, folder: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for relative, text in sorted(files.items()):
            archive.writestr(folder + relative, text)
    return buffer.getvalue()


def _write_owned(path: Path, text: str, owner: str, *, stop: Path) -> None:
    """Write a file as the site's owner would have (its new folders too, up to `stop`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    account = pwd.getpwnam(owner)
    part = path
    while part != stop and stop in part.parents:
        os.chown(part, account.pw_uid, account.pw_gid)
        part = part.parent
