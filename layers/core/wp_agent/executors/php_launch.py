"""How PHP is started for WP-CLI: through PHP with the opcache file cache in a private directory
when that provably runs the same program, otherwise `wp` exactly as configured.

A plain `wp` phar compiles itself and WordPress again on every command (~230 ms a command on a
small VPS); PHP's opcache can keep the compiled code in files (~110 ms). The cache directory is
trusted by PHP — whoever can write there can plant compiled code that runs as the site — so it must
be private: `~/.cache/wp-agent/opcache` of the user WP-CLI runs as, created 0700, refused when it is
not owned by that user, is reachable by others, is a symlink, sits below a directory others can
change, or holds a symlink or an entry of another account or that others can write (planted while it
was open: PHP would load it).

The choice is made once per connection (SSH) or executor (local) by `probe_steps`, a plan of POSIX
sh and PHP commands the executor runs where WP-CLI runs (`run_probe`), decided from their answers:
- `WP_CLI_BIN` names PHP itself (`php [-d …] /path/wp-cli.phar`): our `-d` flags go right after the
  PHP binary, before the operator's own (theirs win);
- otherwise its first word is found on PATH, and when that file starts with a PHP shebang
  (`#!/usr/bin/env php`, `#!/usr/bin/php8.2`) its interpreter is run as the kernel would run it,
  with our flags added. A shell wrapper, an ELF binary or `sudo …` runs as today;
- then PHP checks that the script is a phar, that opcache is there, and prepares the directory;
  PHP started with the flags must report them in effect (an operator's `opcache.enable=0` wins).
Each command re-checks the cheap parts (the directory is there, the shebang unchanged) and runs
`wp` as configured when they no longer hold; a PHP that still refuses the cache directory at
start-up (it then runs nothing) is answered by running the same command as configured.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import shlex
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from enum import StrEnum

# Below the home of the user WP-CLI runs as (the SSH user remotely, ours locally).
CACHE_DIR_BELOW_HOME = ".cache/wp-agent/opcache"
PROBE_TIMEOUT_SECONDS = 20
_PHP_NAME = re.compile(r"php[0-9.]*")
# PHP's own options we can see past in `WP_CLI_BIN` (`php -d memory_limit=1G /path/wp-cli.phar`).
_PHP_OPTION_WITH_VALUE = {"-d", "-c"}
_SAFE_PATH = re.compile(r"/[A-Za-z0-9._/-]+")
# PHP refused the cache directory at start-up (it vanished, or is no longer writable) and ran nothing.
_STARTUP_REFUSAL = re.compile(
    r"\A[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4} \(\d+\): Fatal Error opcache\.file_cache_only is set without a proper setting of opcache\.file_cache\s*\Z"
)
PHP_STARTUP_FAILED_EXIT = 254


def opcache_flags(cache_dir: str) -> list[str]:
    return [
        "-d",
        "opcache.enable_cli=1",
        "-d",
        f"opcache.file_cache={cache_dir}",
        "-d",
        "opcache.file_cache_only=1",
        # The directory is private to the user (checked before it is used); the per-file checksum
        # would only catch a corrupted file, and costs ~7% of every start. A truncated file is still
        # refused by its recorded size.
        "-d",
        "opcache.file_cache_consistency_checks=0",
    ]


class LaunchReason(StrEnum):
    """Why a launch was chosen (stable codes: logs, `doctor --json`)."""

    OPCACHE = "opcache"
    DISABLED = "disabled"  # WP_AGENT_OPCACHE=false
    SANDBOX = "sandbox"  # the sandbox's own php command with its own cache
    NOT_FOUND = "not_found"
    NOT_PHP = "not_php_script"  # a shell wrapper, a binary, `sudo …`
    UNSUPPORTED = "unsupported_command"  # WP_CLI_BIN or the shebang in a form we do not take apart
    NOT_PHAR = "not_phar"
    NO_OPCACHE = "no_opcache"
    OPCACHE_OFF = "opcache_off"  # PHP with our flags does not use the file cache (the ini says no)
    UNSAFE_DIR = "unsafe_cache_dir"
    NO_CACHE_DIR = "cache_dir_unavailable"  # cannot be created or written (e.g. a home owned by root)
    PROBE_FAILED = "probe_failed"
    STARTUP_REFUSED = "startup_refused"  # PHP refused the cache directory while running a command


_DETAIL_JA = {
    LaunchReason.OPCACHE: "opcache のファイルキャッシュを使って PHP を起動します",
    LaunchReason.DISABLED: "WP_AGENT_OPCACHE=false のため wp をそのまま実行します",
    LaunchReason.SANDBOX: "サンドボックス専用の opcache ファイルキャッシュを使います",
    LaunchReason.NOT_FOUND: "wp が PATH に見つからないため、そのまま実行します",
    LaunchReason.NOT_PHP: "wp が PHP スクリプトではない（ラッパーのシェルスクリプトなど）ため、そのまま実行します",
    LaunchReason.UNSUPPORTED: "WP_CLI_BIN または wp の先頭行（#!）の形が対象外のため、そのまま実行します",
    LaunchReason.NOT_PHAR: "wp が phar ではないため、そのまま実行します",
    LaunchReason.NO_OPCACHE: "PHP に opcache がないため、そのまま実行します（php-opcache を入れると速くなります）",
    LaunchReason.OPCACHE_OFF: "PHP の設定で opcache が無効のため、そのまま実行します",
    LaunchReason.UNSAFE_DIR: "opcache のキャッシュ用ディレクトリが安全でないため使わず、そのまま実行します",
    LaunchReason.NO_CACHE_DIR: "opcache のキャッシュ用ディレクトリを作成・書き込みできないため、そのまま実行します",
    LaunchReason.PROBE_FAILED: "PHP の起動方法を確認できなかったため、wp をそのまま実行します",
    LaunchReason.STARTUP_REFUSED: "PHP がキャッシュ用ディレクトリを使えなかったため、wp をそのまま実行しています",
}


# The check's findings (_CHECK_PHP: "<kind>[ (mode NNN)]: <path>"), for people.
_UNSAFE = re.compile(r"(?P<kind>[a-z ]+?)(?: \(mode (?P<mode>[0-7]+)\))?: (?P<path>.*)", re.S)
_UNSAFE_JA = {
    "owned by another user": "所有者が別のユーザーです",
    "writable by others": "他のユーザーが書き込めます",
    "reachable by others": "他のユーザーからアクセスできます（権限 {mode}）",
    "symlink": "シンボリックリンクです",
    "not a directory": "ディレクトリではありません",
    "cannot create": "作成できません",
    "not writable": "書き込めません",
    "unsafe name": "パスに使えない文字が含まれます",
    "missing home": "ホームディレクトリがありません（作成しません）",
    "unresolvable": "実体をたどれません",
    "missing": "見つかりません",
}


@dataclass(frozen=True)
class PhpLaunch:
    """How WP-CLI is started: `cached` runs `program + opcache flags + php_options + script + extra`;
    otherwise `WP_CLI_BIN` as configured (SANDBOX: the sandbox's own cached command, for `doctor`)."""

    reason: LaunchReason
    detail: str = ""  # English, for logs: what the probe saw
    program: tuple[str, ...] = ()  # the PHP interpreter as the kernel or WP_CLI_BIN would start it
    php_options: tuple[str, ...] = ()  # the operator's own PHP options from WP_CLI_BIN
    script: str = ""
    extra: tuple[str, ...] = ()  # WP_CLI_BIN's words after the script
    shebang: str = ""  # the script's first line when it was started through it ("" for `php x.phar`)
    cache_dir: str = ""
    php_version: str = ""

    @property
    def cached(self) -> bool:
        """True: commands are started with `php_argv` (while the guard holds)."""
        return self.reason is LaunchReason.OPCACHE

    def php_argv(self) -> list[str]:
        """The words that start WP-CLI through PHP with the cache (before `--path` and the command)."""
        return [*self.program, *opcache_flags(self.cache_dir), *self.php_options, self.script, *self.extra]

    def shell_guard(self) -> str:
        """POSIX sh builtins only: the directory is still there and writable, and the script still
        starts with the shebang the probe saw."""
        directory = shlex.quote(self.cache_dir)
        tests = [f"[ -d {directory} ]", f"[ -w {directory} ]"]
        if self.shebang:
            tests.append(f"{{ IFS= read -r wpagent_line < {shlex.quote(self.script)}; }} 2>/dev/null")
            tests.append(f'[ "$wpagent_line" = {shlex.quote(self.shebang)} ]')
        return " && ".join(tests)

    def guard_holds_here(self) -> bool:
        """`shell_guard` for this machine (local mode), in Python."""
        if not (os.path.isdir(self.cache_dir) and os.access(self.cache_dir, os.W_OK)):
            return False
        if not self.shebang:
            return True
        try:
            with open(self.script, "rb") as script:
                first = script.readline(4096)
        except OSError:
            return False
        return first.removesuffix(b"\n").decode("utf-8", "replace") == self.shebang

    def describe_ja(self) -> str:
        text = _DETAIL_JA[self.reason]
        if self.reason in (LaunchReason.OPCACHE, LaunchReason.SANDBOX):
            version = f"PHP {self.php_version}、" if self.php_version else ""
            return f"{text}（{version}{self.cache_dir}）"
        if self.reason in (LaunchReason.UNSAFE_DIR, LaunchReason.NO_CACHE_DIR) and (
            found := _UNSAFE.match(self.detail)
        ):
            why = _UNSAFE_JA.get(found["kind"], found["kind"]).format(mode=found["mode"])
            return f"{text}（{found['path']}: {why}）"
        return text

    def log_fields(self) -> dict[str, object]:
        return {
            "launch": self.reason.value,
            "launch_detail": self.detail,
            "php_version": self.php_version,
            "cache_dir": self.cache_dir,
        }


def plain(reason: LaunchReason, detail: str = "") -> PhpLaunch:
    return PhpLaunch(reason=reason, detail=detail)


def refused_at_startup(launch: PhpLaunch, exit_code: int, stdout: str, stderr: str) -> bool:
    """PHP stopped at start-up because of the cache directory: nothing of the command ran."""
    return (
        launch.cached
        and exit_code == PHP_STARTUP_FAILED_EXIT
        and not stdout
        and bool(_STARTUP_REFUSAL.match(stderr))
    )


# --- the probe ----------------------------------------------------------------------------------

# What one POSIX sh command line run where WP-CLI runs answered: (exit code, stdout, stderr).
ShellAnswer = tuple[int, str, str]
# probe_steps: yields the command lines to run, is sent their answers, returns the launch.
LaunchProbe = Generator[str, ShellAnswer, PhpLaunch]
_MOST_PROBE_STEPS = 2  # locate, check

_LOCATE = (
    "wpagent_bin=$(command -v -- {word}) || exit 3; "
    'case $wpagent_bin in /*) ;; *) exit 4;; esac; printf "%s\\n" "$wpagent_bin"; '
    '{{ IFS= read -r wpagent_line < "$wpagent_bin"; }} 2>/dev/null; printf "%s\\n" "$wpagent_line"'
)

# PHP 5.6-compatible: runs with whatever PHP the server has. Prints one JSON line; exit 0 when
# opcache is loaded, the script is a phar and the cache directory is private (created when missing).
_CHECK_PHP = r"""
$uid = (int) $argv[1]; $dir = $argv[2]; $script = $argv[3]; $home = $argv[4];
$out = array('php' => PHP_VERSION, 'phar' => false, 'opcache' => extension_loaded('Zend OPcache'), 'dir' => '', 'problem' => '');
function wpagent_done($out, $problem) { $out['problem'] = $problem; echo json_encode($out), "\n"; exit($problem === '' ? 0 : 3); }
function wpagent_ancestor($path, $uid) {
    $st = @lstat($path);
    if ($st === false) return "missing $path";
    if (($st['mode'] & 0170000) === 0120000) return '';
    if (($st['mode'] & 0170000) !== 0040000) return "not a directory: $path";
    if ($st['uid'] !== 0 && $st['uid'] !== $uid) return "owned by another user: $path";
    if (($st['mode'] & 0022) !== 0 && ($st['mode'] & 01000) === 0) return "writable by others: $path";
    return '';
}
function wpagent_contents($dir, $uid) {
    try {
        $all = new RecursiveIteratorIterator(new RecursiveDirectoryIterator($dir, FilesystemIterator::SKIP_DOTS), RecursiveIteratorIterator::SELF_FIRST);
        foreach ($all as $path => $info) {
            $st = @lstat($path);
            if ($st === false) return "unresolvable: $path";
            if (($st['mode'] & 0170000) === 0120000) return "symlink: $path";
            if ($st['uid'] !== 0 && $st['uid'] !== $uid) return "owned by another user: $path";
            if (($st['mode'] & 0022) !== 0) return "writable by others: $path";
        }
    } catch (Exception $e) {
        return "unresolvable: $dir";
    }
    return '';
}
function wpagent_chain($path, $uid, $last) {
    $prefix = '';
    $names = array_values(array_filter(explode('/', $path), 'strlen'));
    foreach ($names as $i => $name) {
        $prefix .= '/' . $name;
        if ($i === count($names) - 1 && !$last) break;
        if (($why = wpagent_ancestor($prefix, $uid)) !== '') return $why;
    }
    return wpagent_ancestor('/', $uid);
}
if (!is_file($script) || !is_readable($script)) wpagent_done($out, 'script_unreadable');
if (!$out['opcache']) wpagent_done($out, 'no_opcache');
if (class_exists('Phar')) { try { $out['phar'] = Phar::loadPhar($script); } catch (Exception $e) {} }
if (!$out['phar']) wpagent_done($out, 'not_phar');
if (!preg_match('#^/[A-Za-z0-9._/-]+$#', $dir) || preg_match('#/\.\.?(/|$)#', $dir)) wpagent_done($out, "unsafe name: $dir");
if (!is_dir($home)) wpagent_done($out, "missing home: $home");
$existing = rtrim($dir, '/'); $missing = array();
while (@lstat($existing) === false) { array_unshift($missing, basename($existing)); $existing = dirname($existing); }
if (!$missing && is_link($existing)) wpagent_done($out, "symlink: $existing");
if (($why = wpagent_chain($existing, $uid, (bool) $missing)) !== '') wpagent_done($out, $why);
$real = realpath($existing);
if ($real === false) wpagent_done($out, "unresolvable: $existing");
if (($why = wpagent_chain($real, $uid, (bool) $missing)) !== '') wpagent_done($out, $why);
$final = rtrim($real, '/');
foreach ($missing as $name) {
    $final .= '/' . $name;
    if (!@mkdir($final, 0700)) wpagent_done($out, "cannot create: $final");
    @chmod($final, 0700);
}
clearstatcache();
$st = @lstat($final);
if ($st === false || ($st['mode'] & 0170000) !== 0040000) wpagent_done($out, "not a directory: $final");
if ($st['uid'] !== $uid) wpagent_done($out, "owned by another user: $final");
if (($st['mode'] & 0077) !== 0) wpagent_done($out, sprintf('reachable by others (mode %o): %s', $st['mode'] & 0777, $final));
if (!is_writable($final)) wpagent_done($out, "not writable: $final");
if (!$missing && ($why = wpagent_contents($final, $uid)) !== '') wpagent_done($out, $why);
$out['dir'] = $final;
wpagent_done($out, '');
"""

# Run with our flags: are they in effect, on our directory? (An operator's opcache.enable=0, or a
# file_cache of their own in WP_CLI_BIN, wins: then WP-CLI runs as configured.)
_VERIFY_PHP = r"""
$dir = ini_get('opcache.file_cache');
echo json_encode(array(
    'enable' => ini_get('opcache.enable'), 'enable_cli' => ini_get('opcache.enable_cli'),
    'only' => ini_get('opcache.file_cache_only'), 'dir' => $dir ? realpath($dir) : '',
)), "\n";
"""


@dataclass(frozen=True)
class _Candidate:
    program: tuple[str, ...]
    php_options: tuple[str, ...]
    script: str
    extra: tuple[str, ...]
    shebang: str


def _is_php(word: str) -> bool:
    return bool(_PHP_NAME.fullmatch(posixpath.basename(word)))


def _from_php_words(words: Sequence[str]) -> _Candidate | None:
    """`php [-d x=y | -c file | -n …] script [args…]`; None for any other PHP option."""
    at = 1
    while at < len(words) and words[at].startswith("-"):
        word = words[at]
        if word in _PHP_OPTION_WITH_VALUE:
            at += 2
        elif word.startswith(("-d", "-c")) or word == "-n":
            at += 1
        else:
            return None
    if at >= len(words):
        return None
    return _Candidate((words[0],), tuple(words[1:at]), words[at], tuple(words[at + 1 :]), "")


def parse_shebang(line: str) -> tuple[str, ...] | None:
    """The PHP interpreter a `#!` line starts, as the kernel would (path + at most one argument):
    `#!/usr/bin/php8.2` or `#!/usr/bin/env php`. None for anything else."""
    if not line.startswith("#!"):
        return None
    interpreter, _, argument = line[2:].strip().partition(" ")
    argument = argument.strip()
    if not interpreter.startswith("/"):
        return None
    if _is_php(interpreter) and not argument:
        return (interpreter,)
    if posixpath.basename(interpreter) == "env" and _PHP_NAME.fullmatch(argument):
        return (interpreter, argument)
    return None


def _located(words: Sequence[str], answer: ShellAnswer) -> _Candidate | PhpLaunch:
    code, out, _err = answer
    if code in (3, 4):
        return plain(LaunchReason.NOT_FOUND, f"{words[0]} not found on PATH")
    lines = out.split("\n")
    if code != 0 or len(lines) < 2 or not lines[0].startswith("/"):
        return plain(LaunchReason.PROBE_FAILED, f"locating {words[0]} answered exit {code}")
    path, first_line = lines[0], lines[1]
    if not first_line.startswith("#!"):
        return plain(LaunchReason.NOT_PHP, f"{path} is not a script")
    program = parse_shebang(first_line)
    if program is None:
        kind = LaunchReason.NOT_PHP if "php" not in first_line else LaunchReason.UNSUPPORTED
        return plain(kind, f"{path} starts with {first_line[:80]!r}")
    return _Candidate(program, (), path, tuple(words[1:]), first_line)


def probe_steps(wp_cli_bin: str) -> LaunchProbe:
    """The shell commands that decide how to start WP-CLI, each to be sent its answer (exit code,
    stdout, stderr) from where WP-CLI runs; returns the launch. What it finds there never raises (a
    failing probe is a plain launch); the executor runs the commands and raises for its connection."""
    try:
        words = shlex.split(wp_cli_bin)
    except ValueError:
        return plain(LaunchReason.UNSUPPORTED, "WP_CLI_BIN cannot be split")
    if not words:
        return plain(LaunchReason.UNSUPPORTED, "WP_CLI_BIN is empty")
    if _is_php(words[0]):
        found = _from_php_words(words)
        if found is None:
            return plain(LaunchReason.UNSUPPORTED, "WP_CLI_BIN has PHP options we do not take apart")
    else:
        located = _located(words, (yield _LOCATE.format(word=shlex.quote(words[0]))))
        if isinstance(located, PhpLaunch):
            return located
        found = located
    return _checked(found, (yield _check_command(found)))


def run_probe(steps: LaunchProbe, run: Callable[[str], ShellAnswer]) -> PhpLaunch:
    """Runs the probe's commands with `run` (an executor's shell) and returns the launch decided;
    `run`'s own errors (a connection that fails) are the caller's."""
    try:
        command = next(steps)
        for _ in range(_MOST_PROBE_STEPS):
            command = steps.send(run(command))
    except StopIteration as finished:
        launch: PhpLaunch = finished.value
        return launch
    raise RuntimeError("the launch probe asked for more steps than it has")


def _check_command(found: _Candidate) -> str:
    php = shlex.join(found.program)
    own = shlex.join(found.php_options)
    flags = " ".join(opcache_flags('"$wpagent_dir"'))  # the other flags hold no shell characters
    check = " ".join(part for part in (php, own, "-r", shlex.quote(_CHECK_PHP)) if part)
    verify = " ".join(part for part in (php, flags, own, "-r", shlex.quote(_VERIFY_PHP)) if part)
    return (
        f'[ -n "$HOME" ] || exit 5; wpagent_dir="$HOME"/{CACHE_DIR_BELOW_HOME}; wpagent_uid=$(id -u) || exit 5; '
        f'timeout {PROBE_TIMEOUT_SECONDS} {check} -- "$wpagent_uid" "$wpagent_dir" {shlex.quote(found.script)} "$HOME" '
        f"|| exit $?; exec timeout {PROBE_TIMEOUT_SECONDS} {verify}"
    )


def _checked(found: _Candidate, answer: ShellAnswer) -> PhpLaunch:
    code, out, err = answer
    if code == 127:
        return plain(LaunchReason.NOT_FOUND, f"{found.program[-1]} not found")
    checked, verified = (_json_line(out, at) for at in (0, 1))
    if checked is None:
        first = next(iter(err.strip().splitlines()), "")
        return plain(LaunchReason.PROBE_FAILED, f"php check answered exit {code}: {first[:200]}")
    version = str(checked.get("php", ""))
    problem = str(checked.get("problem", ""))
    if problem in ("not_phar", "script_unreadable"):
        return plain(LaunchReason.NOT_PHAR, f"{found.script}: {problem}")
    if problem == "no_opcache":
        return plain(LaunchReason.NO_OPCACHE, f"PHP {version} has no opcache")
    if problem.startswith(("cannot create", "not writable", "missing home")):
        return PhpLaunch(LaunchReason.NO_CACHE_DIR, problem, php_version=version)
    if problem:
        return PhpLaunch(LaunchReason.UNSAFE_DIR, problem, php_version=version)
    directory = str(checked.get("dir", ""))
    if code != 0 or verified is None or not _SAFE_PATH.fullmatch(directory):
        return plain(LaunchReason.PROBE_FAILED, f"php verify answered exit {code}")
    settings = (verified.get("enable"), verified.get("enable_cli"), verified.get("only"))
    if settings != ("1", "1", "1") or verified.get("dir") != directory:
        return plain(LaunchReason.OPCACHE_OFF, f"with our flags PHP reports {verified}")
    return PhpLaunch(
        LaunchReason.OPCACHE,
        "php with the opcache file cache",
        program=found.program,
        php_options=found.php_options,
        script=found.script,
        extra=found.extra,
        shebang=found.shebang,
        cache_dir=directory,
        php_version=version,
    )


def _json_line(out: str, index: int) -> dict[str, object] | None:
    lines = [line for line in out.split("\n") if line.strip()]
    try:
        value = json.loads(lines[index]) if len(lines) > index else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
