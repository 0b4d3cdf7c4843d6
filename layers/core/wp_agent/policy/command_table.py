"""The allow-list of WP-CLI command paths, each with its category and a Japanese label.

Anything not listed here is blocked. Every `write` has a declared effect (effects/): it runs without
approval only inside that declaration. `destructive` always waits for approval: deletions, and
writes whose effect cannot be declared — a plugin's activation runs the plugin's own code, an installed
plugin or theme puts third-party PHP files where the web server runs them on request, a new user is
a new login, a site's activation or unarchiving reaches the whole network. Argument-level rules
(delete flags, important options, install sources, …) live in `argument_rules.py`; the never-allowed
families in `HARD_BLOCKS`.
"""

from __future__ import annotations

from dataclasses import dataclass

from wp_agent.policy.categories import PolicyCategory

R = PolicyCategory.READ
W = PolicyCategory.WRITE
D = PolicyCategory.DESTRUCTIVE


@dataclass(frozen=True)
class CommandEntry:
    path: tuple[str, ...]
    category: PolicyCategory
    label_ja: str
    custom: bool = False  # added by an FR-5.2 allow rule


def _table(rows: dict[str, tuple[PolicyCategory, str]]) -> dict[tuple[str, ...], CommandEntry]:
    return {tuple(k.split()): CommandEntry(tuple(k.split()), cat, label) for k, (cat, label) in rows.items()}


# The pinned WP-CLI's ordinary writes whose effect is not declared (effects/): each waits for the
# person, its approval naming every argument and option as WP-CLI reads them (SPELLED_OUT below).
HELD_AS_WRITTEN: dict[str, tuple[PolicyCategory, str]] = {
    "comment meta add": (D, "コメントメタの追加"),
    "comment meta update": (D, "コメントメタの更新"),
    "comment meta patch": (D, "コメントメタの部分更新"),
    "comment meta delete": (D, "コメントメタの削除"),
    "site meta add": (D, "サイトメタの追加"),
    "site meta update": (D, "サイトメタの更新"),
    "site meta patch": (D, "サイトメタの部分更新"),
    "site meta delete": (D, "サイトメタの削除"),
    "site option add": (D, "ネットワーク設定の追加"),
    "site option update": (D, "ネットワーク設定の変更"),
    "site option patch": (D, "ネットワーク設定の部分変更"),
    "site option delete": (D, "ネットワーク設定の削除"),
    "network meta add": (D, "ネットワークメタの追加"),
    "network meta update": (D, "ネットワークメタの更新"),
    "network meta patch": (D, "ネットワークメタの部分更新"),
    "network meta delete": (D, "ネットワークメタの削除"),
    "post meta clean-duplicates": (D, "重複した投稿メタの整理"),
    "cron test": (D, "WP-Cronの動作確認（サーバーが自サイトの wp-cron.php にリクエストします）"),
    "site mature": (D, "サイトを成人向けに設定"),
    "site unmature": (D, "サイトの成人向け設定の解除"),
    "option set-autoload": (D, "設定の自動読み込みの変更"),
    "transient set": (D, "一時データの保存"),
    "cache delete": (D, "オブジェクトキャッシュの値の削除"),
    "cache flush-group": (D, "オブジェクトキャッシュのグループの削除"),
    "embed cache clear": (D, "投稿の埋め込みキャッシュの削除"),
    "embed cache trigger": (D, "投稿の埋め込みキャッシュの再作成（埋め込み先のURLを取得します）"),
    "embed fetch": (D, "埋め込みHTMLの取得（サーバーが指定のURLを取得し、結果を保存します）"),
    "embed provider match": (
        D,
        "埋め込みプロバイダの判定（サーバーが指定のURLを取得します。--no-discover で取得せずに判定）",
    ),
    "media fix-orientation": (D, "画像の向きの補正（画像ファイルを書き換えます。--dry-run で確認のみ）"),
    "post generate": (D, "テスト用の投稿の一括作成"),
    "comment generate": (D, "テスト用のコメントの一括作成"),
    "term generate": (D, "テスト用のカテゴリ・タグの一括作成"),
    "term migrate": (D, "タームの別タクソノミーへの移動"),
    "user term add": (D, "ユーザーへのターム追加"),
    "user term set": (D, "ユーザーのターム設定"),
    "user term remove": (D, "ユーザーからタームを外す"),
    "language plugin update": (D, "プラグイン言語パックの更新（翻訳ファイルはPHPとして読み込まれます）"),
    "language theme update": (D, "テーマ言語パックの更新（翻訳ファイルはPHPとして読み込まれます）"),
    "language plugin uninstall": (D, "プラグイン言語パックの削除"),
    "language theme uninstall": (D, "テーマ言語パックの削除"),
    "theme auto-updates status": (D, "テーマ自動更新の状態取得（テーマの一覧を保存し直します）"),
    "theme auto-updates enable": (
        D,
        "テーマ自動更新の有効化（以後の更新が確認なしで適用され、マルチサイトでは全サイトに及びます）",
    ),
    "theme auto-updates disable": (D, "テーマ自動更新の無効化（マルチサイトでは全サイトに及びます）"),
}

# Commands of the current WP-CLI release and its bundled packages that the pinned phar (2.10.0) does not
# have, classified from the official command reference (their synopses: reference_synopses.json). A
# read runs where the server's WP-CLI has the command (where it does not, WP-CLI's "not a registered
# command" is told plainly); a write always waits for the person, since no newer WP-CLI can be run
# here to prove its effect. Reads that store what they fetched (update checks, font collections) wait too.
REFERENCE_ONLY: dict[str, tuple[PolicyCategory, str]] = {
    "post block list": (R, "投稿のブロックの一覧取得"),
    "post block get": (R, "投稿のブロックの取得"),
    "post block count": (R, "ブロックの使用数の集計"),
    "post block extract": (R, "ブロックの属性・内容の抽出"),
    "post block export": (R, "投稿のブロックの書き出し（画面への表示のみ）"),
    "post block parse": (R, "投稿のブロック構造の解析"),
    "post has-block": (R, "投稿が特定のブロックを含むかの確認"),
    "post has-blocks": (R, "投稿がブロックを含むかの確認"),
    "post revision diff": (R, "リビジョンの差分表示"),
    "menu item get": (R, "メニュー項目の詳細取得"),
    "user exists": (R, "ユーザーの存在確認"),
    "user privacy-request list": (R, "個人データの請求の一覧取得"),
    "user signup list": (R, "ユーザー登録申請の一覧取得"),
    "user signup get": (R, "ユーザー登録申請の詳細取得"),
    "sidebar get": (R, "サイドバーの詳細取得"),
    "sidebar exists": (R, "サイドバーの存在確認"),
    "site get": (R, "サイトの詳細取得"),
    "core check-update-db": (R, "データベース更新の要否の確認"),
    "font collection is-registered": (R, "フォントコレクションの登録確認"),
    # Both call the ability's own code (its permission callback, a custom ability class) with the input given.
    "ability validate": (D, "アビリティへの入力の検証（アビリティを登録したプラグインのコードが動きます）"),
    "ability can-run": (D, "アビリティを実行できるかの確認（権限確認のためプラグインのコードが動きます）"),
    "transient pluck": (R, "一時データの値の一部取得"),
    "plugin check-update": (D, "プラグインの更新確認（確認結果を保存します）"),
    "theme check-update": (D, "テーマの更新確認（確認結果を保存します）"),
    "font collection list": (D, "フォントコレクションの一覧取得（配布元から取得して保存します）"),
    "font collection get": (D, "フォントコレクションの詳細取得（配布元から取得して保存します）"),
    "font collection list-families": (D, "フォントファミリーの一覧取得（配布元から取得して保存します）"),
    "font collection list-categories": (D, "フォントカテゴリの一覧取得（配布元から取得して保存します）"),
    "font family install": (D, "フォントファミリーのインストール"),
    "font face install": (D, "フォントの書体のインストール（サーバーがフォントファイルを取得します）"),
    # Rendering runs dynamic blocks and plugins' filters: a navigation block saved a wp_navigation post, an
    # embed an oembed_cache post, an RSS block fetched its feed (WordPress 7.1) — not a read.
    "post block render": (
        D,
        "ブロックの描画（動的ブロックやプラグインのコードが動き、保存や外部への取得が起こることがあります）",
    ),
    "post block update": (D, "ブロックの更新"),
    "post block insert": (D, "ブロックの挿入"),
    "post block import": (D, "ブロックの取り込み"),
    "post block clone": (D, "ブロックの複製"),
    "post block move": (D, "ブロックの移動"),
    "post block remove": (D, "ブロックの削除"),
    "post block replace": (D, "ブロックの置き換え"),
    "post revision prune": (D, "古いリビジョンの削除"),
    "post revision restore": (D, "リビジョンからの復元"),
    "term prune": (D, "投稿が1件以下のタームの削除（カテゴリ・タグに限らず、指定したタクソノミーの全て）"),
    "media replace": (D, "メディアのファイルの差し替え"),
    "media prune": (
        D,
        "生成済みの画像サイズのファイル削除（指定がなければ全ての画像。投稿内の縮小画像のURLが切れることがあります）",
    ),
    "widget patch": (D, "ウィジェット設定の部分変更"),
    "transient patch": (D, "一時データの部分変更"),
    "user privacy-request create": (D, "個人データの請求の作成"),
    "user privacy-request complete": (D, "個人データの請求の完了"),
    "user privacy-request delete": (D, "個人データの請求の削除"),
    "user privacy-request erase": (D, "個人データの消去（請求に基づき削除します）"),
    "user privacy-request export": (D, "個人データの書き出し（ZIPファイルをサーバーに作成します）"),
    "user signup activate": (D, "ユーザー登録申請の承認（ログインできるアカウントが作られます）"),
    "user signup delete": (D, "ユーザー登録申請の削除"),
    "site generate": (D, "テスト用のサイトの一括作成"),
    "plugin download": (D, "プラグインのダウンロード（ZIPファイルをサーバーに保存します）"),
    "theme download": (D, "テーマのダウンロード（ZIPファイルをサーバーに保存します）"),
    "plugin install-dependencies": (
        D,
        "プラグインが必要とするプラグインのインストール（第三者のコードをサーバーに置きます）",
    ),
}

# `read` means the command changes nothing on a real site (checked for every read entry by
# tests/integration/test_read_means_read.py). Some lookups are writes there: the update checks of
# plugin/theme listings, `theme get`, `status` and `check-update` store what they fetched in site
# transients, and reading an expired transient deletes it.
ALLOWED_COMMANDS: dict[tuple[str, ...], CommandEntry] = _table(
    {
        # Posts, pages (post_type=page) and media (post_type=attachment)
        "post list": (R, "投稿の一覧取得"),
        "post get": (R, "投稿の詳細取得"),
        "post exists": (R, "投稿の存在確認"),
        "post url-to-id": (R, "URLから投稿IDを取得"),
        "post create": (W, "投稿の作成"),
        "post update": (W, "投稿の更新"),
        "post delete": (D, "投稿の削除"),
        "post meta list": (R, "投稿メタの一覧取得"),
        "post meta get": (R, "投稿メタの取得"),
        "post meta add": (W, "投稿メタの追加"),
        "post meta update": (W, "投稿メタの更新"),
        "post meta patch": (W, "投稿メタの部分更新"),
        "post meta pluck": (R, "投稿メタの値取得"),
        "post meta delete": (D, "投稿メタの削除"),
        "post term list": (R, "投稿のカテゴリ・タグ一覧取得"),
        "post term add": (W, "投稿へのカテゴリ・タグ追加"),
        "post term set": (W, "投稿のカテゴリ・タグ設定"),
        "post term remove": (W, "投稿からカテゴリ・タグを外す"),
        "post-type list": (R, "投稿タイプの一覧取得"),
        "post-type get": (R, "投稿タイプの詳細取得"),
        "media import": (W, "メディアのインポート"),
        "media image-size": (R, "画像サイズの一覧取得"),
        "media regenerate": (W, "画像サムネイルの再生成"),
        # Taxonomies
        "taxonomy list": (R, "タクソノミーの一覧取得"),
        "taxonomy get": (R, "タクソノミーの詳細取得"),
        "term list": (R, "カテゴリ・タグの一覧取得"),
        "term get": (R, "カテゴリ・タグの詳細取得"),
        "term create": (W, "カテゴリ・タグの作成"),
        "term update": (W, "カテゴリ・タグの更新"),
        "term delete": (D, "カテゴリ・タグの削除"),
        "term recount": (W, "カテゴリ・タグの件数再計算"),
        "term meta list": (R, "タームメタの一覧取得"),
        "term meta get": (R, "タームメタの取得"),
        "term meta add": (W, "タームメタの追加"),
        "term meta update": (W, "タームメタの更新"),
        "term meta delete": (D, "タームメタの削除"),
        "term meta patch": (W, "タームメタの部分更新"),
        "term meta pluck": (R, "タームメタの値取得"),
        # Comments
        "comment list": (R, "コメントの一覧取得"),
        "comment get": (R, "コメントの詳細取得"),
        "comment count": (R, "コメント数の取得"),
        "comment exists": (R, "コメントの存在確認"),
        "comment status": (R, "コメントの状態取得"),
        "comment create": (W, "コメントの作成"),
        "comment update": (W, "コメントの更新"),
        "comment approve": (W, "コメントの承認"),
        "comment unapprove": (W, "コメントの承認取り消し"),
        "comment spam": (W, "コメントをスパムに設定"),
        "comment unspam": (W, "コメントのスパム解除"),
        "comment untrash": (W, "コメントをゴミ箱から戻す"),
        "comment recount": (W, "コメント数の再計算"),
        "comment trash": (D, "コメントをゴミ箱へ移動"),
        "comment delete": (D, "コメントの削除"),
        # Menus
        "menu list": (R, "メニューの一覧取得"),
        "menu create": (W, "メニューの作成"),
        "menu delete": (D, "メニューの削除"),
        "menu item list": (R, "メニュー項目の一覧取得"),
        "menu item add-post": (W, "メニューへの投稿追加"),
        "menu item add-term": (W, "メニューへのターム追加"),
        "menu item add-custom": (W, "メニューへのリンク追加"),
        "menu item update": (W, "メニュー項目の更新"),
        "menu item delete": (D, "メニュー項目の削除"),
        "menu location list": (R, "メニュー位置の一覧取得"),
        "menu location assign": (W, "メニュー位置の割り当て"),
        "menu location remove": (W, "メニュー位置の割り当て解除"),
        # Appearance
        "theme list": (
            W,
            "テーマの一覧取得（更新確認の結果を保存します。--skip-update-check で読み取りのみ）",
        ),
        "theme get": (W, "テーマの詳細取得（更新確認の結果を保存します）"),
        "theme status": (W, "テーマの状態取得（更新確認の結果を保存します）"),
        "theme search": (R, "テーマの検索"),
        "theme is-installed": (R, "テーマのインストール確認"),
        "theme is-active": (R, "テーマの有効化確認"),
        "theme install": (D, "テーマのインストール（第三者のコードをサーバーに置きます）"),
        "theme update": (D, "テーマの更新（新しいコードに置き換わります）"),
        "theme activate": (D, "テーマの有効化（切り替え）"),
        "theme enable": (
            D,
            "テーマのネットワーク有効化（ネットワークの各サイトでテーマのコードを選べるようになります）",
        ),
        "theme disable": (D, "テーマのネットワーク無効化"),
        "theme delete": (D, "テーマの削除"),
        "theme mod list": (R, "テーマ設定の一覧取得"),
        "theme mod get": (R, "テーマ設定の取得"),
        "theme mod set": (W, "テーマ設定の変更"),
        "theme mod remove": (D, "テーマ設定の削除"),
        "sidebar list": (R, "サイドバーの一覧取得"),
        "widget list": (R, "ウィジェットの一覧取得"),
        "widget add": (W, "ウィジェットの追加"),
        "widget update": (W, "ウィジェットの更新"),
        "widget move": (W, "ウィジェットの移動"),
        "widget deactivate": (W, "ウィジェットの無効化"),
        "widget delete": (D, "ウィジェットの削除"),
        "widget reset": (D, "サイドバーのウィジェットを全て外す"),
        # Plugins
        "plugin list": (
            W,
            "プラグインの一覧取得（更新確認の結果を保存します。--skip-update-check で読み取りのみ）",
        ),
        "plugin get": (R, "プラグインの詳細取得"),
        "plugin status": (W, "プラグインの状態取得（更新確認の結果を保存します）"),
        "plugin search": (R, "プラグインの検索"),
        "plugin is-installed": (R, "プラグインのインストール確認"),
        "plugin is-active": (R, "プラグインの有効化確認"),
        "plugin verify-checksums": (R, "プラグインの改ざん確認"),
        "plugin install": (D, "プラグインのインストール（第三者のコードをサーバーに置きます）"),
        "plugin activate": (D, "プラグインの有効化（プラグインのコードが実行されます）"),
        "plugin update": (D, "プラグインの更新（新しいコードに置き換わります）"),
        "plugin auto-updates status": (R, "プラグイン自動更新の状態取得"),
        # From now on, updates apply with nobody asked again; on a multisite, to every site.
        "plugin auto-updates enable": (
            D,
            "プラグイン自動更新の有効化（以後の更新が確認なしで適用され、マルチサイトでは全サイトに及びます）",
        ),
        "plugin auto-updates disable": (
            D,
            "プラグイン自動更新の無効化（マルチサイトでは全サイトに及びます）",
        ),
        "plugin deactivate": (D, "プラグインの無効化"),
        "plugin toggle": (D, "プラグインの有効・無効切り替え"),
        "plugin uninstall": (D, "プラグインのアンインストール"),
        "plugin delete": (D, "プラグインの削除"),
        # Users
        "user list": (R, "ユーザーの一覧取得"),
        "user get": (R, "ユーザーの詳細取得"),
        "user list-caps": (R, "ユーザー権限の一覧取得"),
        "user meta list": (R, "ユーザーメタの一覧取得"),
        "user meta get": (R, "ユーザーメタの取得"),
        "user meta add": (W, "ユーザーメタの追加"),
        "user meta update": (W, "ユーザーメタの更新"),
        "user meta delete": (D, "ユーザーメタの削除"),
        "user meta patch": (W, "ユーザーメタの部分更新"),
        "user meta pluck": (R, "ユーザーメタの値取得"),
        "user session list": (R, "ログインセッションの一覧取得"),
        "user create": (D, "ユーザーの作成（ログインできるアカウント）"),
        "user update": (W, "ユーザーの更新"),
        "user set-role": (D, "ユーザー権限の設定"),
        "user add-role": (W, "ユーザー権限の追加"),
        "user remove-role": (D, "ユーザー権限の削除"),
        "user remove-cap": (D, "ユーザーの個別権限削除"),
        "user reset-password": (D, "ユーザーのパスワードリセット"),
        "user session destroy": (D, "ログインセッションの破棄"),
        "user spam": (D, "ユーザーをスパムに設定"),
        "user unspam": (D, "ユーザーのスパム解除（ログインできるようになります）"),
        "user delete": (D, "ユーザーの削除"),
        "role list": (R, "権限グループの一覧取得"),
        "role exists": (R, "権限グループの存在確認"),
        # Rights only taken away, or a role with none: they wait (granting is refused: HARD_BLOCKS).
        "role create": (D, "権限グループの作成（権限なし）"),
        "role delete": (D, "権限グループの削除"),
        "cap remove": (D, "権限グループからの権限削除"),
        "cap list": (R, "権限の一覧取得"),
        "super-admin list": (R, "特権管理者の一覧取得"),
        "super-admin remove": (D, "特権管理者の削除"),
        # Options
        "option get": (R, "設定値の取得"),
        "option list": (R, "設定の一覧取得"),
        "option pluck": (R, "設定値の一部取得"),
        "option add": (W, "設定の追加"),
        "option update": (W, "設定の変更"),
        "option patch": (D, "設定の部分変更"),
        "option delete": (D, "設定の削除"),
        # Multisite
        "site list": (R, "サイトの一覧取得"),
        "site create": (W, "サイトの作成"),
        "site activate": (D, "サイトの有効化"),
        "site unarchive": (D, "サイトのアーカイブ解除"),
        "site unspam": (D, "サイトのスパム解除"),
        "site switch-language": (D, "サイトの言語切り替え"),  # every visitor's and the dashboard's language
        "site public": (D, "サイトの公開（検索エンジンへの公開）"),
        "site private": (D, "サイトの非公開化"),
        "site deactivate": (D, "サイトの無効化"),
        "site archive": (D, "サイトのアーカイブ"),
        "site spam": (D, "サイトをスパムに設定"),
        "site delete": (D, "サイトの削除"),
        "site option get": (R, "ネットワーク設定の取得"),
        "site option list": (R, "ネットワーク設定の一覧取得"),
        # Maintenance
        "cache flush": (W, "オブジェクトキャッシュの削除"),
        "cache type": (R, "キャッシュ方式の取得"),
        "transient get": (W, "一時データの取得（期限切れのものは削除されます）"),
        "transient delete": (W, "一時データの削除"),
        "rewrite flush": (W, "パーマリンク設定の再生成"),
        "rewrite list": (R, "リライトルールの一覧取得"),
        "rewrite structure": (D, "パーマリンク構造の変更"),
        "cron event list": (R, "予約イベントの一覧取得"),
        "cron event unschedule": (D, "予約イベントの登録解除"),
        "cron event delete": (D, "予約イベントの削除"),
        "cron schedule list": (R, "予約スケジュールの一覧取得"),
        "core version": (R, "WordPressバージョンの取得"),
        "core check-update": (W, "WordPress更新の確認（確認結果を保存します）"),
        # Guarded (executors/code_guard.py): files and, for a new branch, the database backed up on the
        # server; the database step run inside the guard; both put back when the site got worse.
        "core update": (D, "WordPress本体の更新（新しいコードに置き換わります）"),
        "core is-installed": (R, "WordPressのインストール確認"),
        "core verify-checksums": (R, "WordPressコアの改ざん確認"),
        "language core list": (R, "言語の一覧取得"),
        "language core install": (D, "言語パックのインストール（翻訳ファイルはPHPとして読み込まれます）"),
        "language core activate": (D, "サイト言語の切り替え"),
        "language core update": (D, "言語パックの更新（翻訳ファイルはPHPとして読み込まれます）"),
        "language core uninstall": (D, "言語パックの削除"),
        "language plugin list": (W, "プラグイン言語の一覧取得（更新確認の結果を保存します）"),
        "language plugin install": (
            D,
            "プラグイン言語パックのインストール（翻訳ファイルはPHPとして読み込まれます）",
        ),
        "language theme list": (W, "テーマ言語の一覧取得（更新確認の結果を保存します）"),
        "language theme install": (
            D,
            "テーマ言語パックのインストール（翻訳ファイルはPHPとして読み込まれます）",
        ),
        "maintenance-mode status": (R, "メンテナンスモードの状態取得"),
        "maintenance-mode is-active": (R, "メンテナンスモードの確認"),
        "maintenance-mode activate": (D, "メンテナンスモードの開始（サイト停止）"),
        "maintenance-mode deactivate": (W, "メンテナンスモードの終了"),
        "search-replace": (D, "データベース内の文字列置換"),
        "help": (R, "WP-CLIのヘルプ表示"),
        # The Abilities API's registry (WordPress 6.9+): what each ability says it is, never running one
        # (`ability run` is refused). Answered by our reader where the site's WP-CLI has no ability
        # command (executors/ability_reads.py).
        "ability list": (R, "アビリティ（Abilities API）の一覧取得"),
        "ability get": (R, "アビリティの詳細取得"),
        "ability exists": (R, "アビリティの存在確認"),
        "ability category list": (R, "アビリティのカテゴリ一覧取得"),
        "ability category get": (R, "アビリティのカテゴリの詳細取得"),
        "ability category exists": (R, "アビリティのカテゴリの存在確認"),
        # The harmless reads of families refused as a whole (HARD_BLOCKS: `db`, `config`, `cli`): sizes and
        # names of tables through WordPress's own connection (no SQL of the caller's, no export), the
        # non-secret constants of wp-config.php (argument_rules: no credential, key or salt, no other
        # file), WP-CLI's version.
        "db size": (R, "データベースのサイズ取得"),
        "db tables": (R, "データベースのテーブル一覧取得"),
        "db prefix": (R, "テーブル接頭辞の取得"),
        "db columns": (R, "テーブルの列一覧取得"),
        "config get": (R, "wp-config.php の設定値の取得（認証情報を除く）"),
        "config has": (R, "wp-config.php の設定の有無の確認"),
        "config is-true": (R, "wp-config.php の設定が有効かの確認"),
        "config path": (R, "wp-config.php の場所の取得"),
        "cli version": (R, "WP-CLIのバージョン取得"),
        "cli info": (R, "WP-CLIの実行環境の情報取得"),
        # Reads of the pinned WP-CLI that were missing (WP-CLI's own examples ask for them): meta of
        # comments, sites and the network under the same secret rules as every meta read, nested values
        # of network options as `site option get` reads them, where files live, what is installed.
        "comment meta list": (R, "コメントメタの一覧取得"),
        "site meta list": (R, "サイトメタの一覧取得"),
        "network meta get": (R, "ネットワークメタの取得"),
        "network meta list": (R, "ネットワークメタの一覧取得"),
        "network meta pluck": (R, "ネットワークメタの値取得"),
        "site option pluck": (R, "ネットワーク設定の値取得"),
        "user term list": (R, "ユーザーのターム一覧取得"),
        "embed provider list": (R, "埋め込みプロバイダの一覧取得"),
        "embed handler list": (R, "埋め込みハンドラの一覧取得"),
        "language core is-installed": (R, "言語パックの導入確認"),
        "language plugin is-installed": (R, "プラグイン言語パックの導入確認"),
        "language theme is-installed": (R, "テーマ言語パックの導入確認"),
        "plugin path": (R, "プラグインの場所の取得"),
        "theme path": (R, "テーマの場所の取得"),
        "transient type": (R, "一時データの保存先の取得"),
        # The rest of the pinned WP-CLI's reads: proven to change nothing on the real site like every
        # read (tests/integration/test_read_means_read.py); meta and transients under the same secret
        # and oracle rules as every meta and option read.
        "comment meta get": (R, "コメントメタの取得"),
        "comment meta pluck": (R, "コメントメタの値取得"),
        "site meta get": (R, "サイトメタの取得"),
        "site meta pluck": (R, "サイトメタの値取得"),
        "option get-autoload": (R, "設定の自動読み込みの有無の取得"),
        "transient list": (R, "一時データの一覧取得"),
        "cache supports": (R, "オブジェクトキャッシュの機能の確認"),
        "embed cache find": (R, "埋め込みキャッシュの確認"),
        **HELD_AS_WRITTEN,
        **REFERENCE_ONLY,
    }
)


# Held paths whose approval names every argument and every option of the command's own synopsis as WP-CLI
# reads them (policy/approval_summary/): no summary of ours explains their effect in other words, so the
# person sees exactly what runs. Options outside the synopsis (WP-CLI's global ones) stay refused.
SPELLED_OUT: frozenset[tuple[str, ...]] = frozenset(
    tuple(name.split())
    for name, (category, _) in {**HELD_AS_WRITTEN, **REFERENCE_ONLY}.items()
    if category is D
)
# What the pinned phar does not have: read by its reference synopsis, never proven on the sandbox.
NEWER_THAN_PINNED: frozenset[tuple[str, ...]] = frozenset(tuple(name.split()) for name in REFERENCE_ONLY)


@dataclass(frozen=True)
class HardBlock:
    """A command family that no configuration can allow. A family-wide block (`db`, `config`, `cli`) gives
    way only to a longer path of the built-in table above (its harmless reads); no custom rule adds one."""

    path: tuple[str, ...]
    rule: str
    reason_ja: str


HARD_BLOCKS: tuple[HardBlock, ...] = (
    HardBlock(
        ("eval",), "blocked.code_execution", "任意のPHPコードを実行するコマンド（eval）は実行できません"
    ),
    HardBlock(
        ("eval-file",),
        "blocked.code_execution",
        "任意のPHPファイルを実行するコマンド（eval-file）は実行できません",
    ),
    HardBlock(("shell",), "blocked.code_execution", "対話シェル（shell）は実行できません"),
    # WP-CLI sets each generated user's password to its login name (`user_1_4` / `user_1_4`): as many
    # accounts anyone can log into as --count says, with any --role.
    HardBlock(
        ("user", "generate"),
        "blocked.account_generation",
        "テスト用ユーザーの一括作成（user generate）は、ログイン名と同じパスワードのアカウントを作るため実行できません",
    ),
    # The object cache holds copies of options, users and their meta: a value written there is read back
    # as the option or the capability (`site-options` group `1:site_admins`, `user_meta` capabilities)
    # with none of the rules on those writes. Deleting an entry only makes WordPress read the table again.
    *(
        HardBlock(
            ("cache", verb),
            "blocked.object_cache_write",
            f"オブジェクトキャッシュへの値の書き込み（cache {verb}）は、設定やユーザー権限の写しを書き換えられるため実行できません。"
            "設定は option、ユーザーは user コマンドで変更してください",
        )
        for verb in ("add", "set", "replace", "incr", "decr", "patch")
    ),
    HardBlock(
        ("ability", "run"),
        "blocked.code_execution",
        "アビリティの実行（ability run）は、登録したプラグインのコードを任意の入力で実行するため使用できません",
    ),
    HardBlock(
        ("post", "edit"),
        "blocked.interactive_editor",
        "エディタを起動するコマンド（post edit）は使用できません。post update を使ってください",
    ),
    # The object cache holds copies of options, users and their meta (credentials among them) under keys
    # no secret-name rule can see: its values are not read.
    HardBlock(
        ("cache", "get"),
        "blocked.object_cache_read",
        "オブジェクトキャッシュの値（設定やユーザー情報の写しで、認証情報を含むことがあります）は読み取れません。"
        "設定は option get、ユーザーは user get で確認してください",
    ),
    HardBlock(
        ("cache", "pluck"),
        "blocked.object_cache_read",
        "オブジェクトキャッシュの値（設定やユーザー情報の写しで、認証情報を含むことがあります）は読み取れません。"
        "設定は option pluck で確認してください",
    ),
    HardBlock(
        ("db", "drop"), "blocked.database", "データベースを削除するコマンド（db drop）は実行できません"
    ),
    HardBlock(
        ("db", "reset"), "blocked.database", "データベースをリセットするコマンド（db reset）は実行できません"
    ),
    HardBlock(("db", "query"), "blocked.database", "任意のSQLを実行するコマンド（db query）は実行できません"),
    HardBlock(
        ("db", "export"),
        "blocked.database",
        "データベースを書き出すコマンド（db export）は情報漏洩の恐れがあるため実行できません",
    ),
    HardBlock(
        ("db",),
        "blocked.database",
        "データベースを直接操作するコマンド（db）は実行できません（読み取りの db size・tables・prefix・columns は実行できます）",
    ),
    HardBlock(
        ("config",),
        "blocked.config",
        "wp-config.php を操作するコマンド（config）は実行できません（認証情報以外の config get・has・is-true・path は実行できます）",
    ),
    HardBlock(
        ("core", "update-db"), "blocked.core", "データベース構造の更新（core update-db）は実行できません"
    ),
    HardBlock(
        ("core", "download"), "blocked.core", "WordPressコアのダウンロード（core download）は実行できません"
    ),
    HardBlock(("core", "install"), "blocked.core", "WordPressのインストール（core install）は実行できません"),
    HardBlock(("core", "multisite-install"), "blocked.core", "マルチサイトのインストールは実行できません"),
    HardBlock(("core", "multisite-convert"), "blocked.core", "マルチサイトへの変換は実行できません"),
    HardBlock(
        ("package",),
        "blocked.package",
        "WP-CLIパッケージの操作（package）は任意コードの導入になるため実行できません",
    ),
    HardBlock(
        ("cli",),
        "blocked.cli",
        "WP-CLI自体の操作（cli）は実行できません（cli version・cli info は実行できます）",
    ),
    HardBlock(
        ("site", "empty"),
        "blocked.site_empty",
        "サイトの全コンテンツを削除するコマンド（site empty）は実行できません",
    ),
    HardBlock(("server",), "blocked.server", "開発用サーバーの起動（server）は実行できません"),
    HardBlock(
        ("scaffold",),
        "blocked.filesystem",
        "サーバーにファイルを生成するコマンド（scaffold）は実行できません",
    ),
    HardBlock(
        ("export",),
        "blocked.data_export",
        "サイト全体を書き出すコマンド（export）は情報漏洩の恐れがあるため実行できません",
    ),
    HardBlock(
        ("import",), "blocked.filesystem", "サーバー上のファイルを読み込むコマンド（import）は実行できません"
    ),
    HardBlock(("user", "import-csv"), "blocked.filesystem", "ファイルからのユーザー一括登録は実行できません"),
    HardBlock(
        ("user", "application-password"),
        "blocked.credentials",
        "アプリケーションパスワード（認証情報）の操作は実行できません",
    ),
    HardBlock(("user", "check-password"), "blocked.credentials", "パスワードの照合は実行できません"),
    HardBlock(("cron", "event", "run"), "blocked.code_execution", "予約イベントの強制実行は実行できません"),
    HardBlock(
        ("cron", "event", "schedule"),
        "blocked.arbitrary_hook",
        "予約イベントの登録（cron event schedule）は、任意の処理（フック）を任意の引数で実行できるため使用できません",
    ),
    # Role definitions and individual grants change what users can do beyond any approval summary;
    # see account_rules.py for the decisions.
    HardBlock(
        ("super-admin", "add"),
        "blocked.privilege_grant",
        "ネットワークの特権管理者（super-admin）の追加は実行できません",
    ),
    HardBlock(
        ("user", "add-cap"),
        "blocked.privilege_grant",
        "ユーザーへの個別権限の付与（user add-cap）は実行できません。権限グループ（user set-role）で設定してください",
    ),
    # What grants rights is refused; what only takes them away or adds an empty role waits (rows above,
    # account_rules: no --clone (cloned_role), no WordPress role deleted, nothing taken from administrators).
    HardBlock(
        ("role", "reset"), "blocked.role_definitions", "権限グループの初期化（role reset）は実行できません"
    ),
    HardBlock(
        ("cap", "add"), "blocked.role_definitions", "権限グループへの権限追加（cap add）は実行できません"
    ),
)
