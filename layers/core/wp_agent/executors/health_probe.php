<?php
/**
 * The site health probe, run on the site's own server with `wp eval-file <this file> '<request JSON>'`
 * (staged for the one command and removed after it, like the Abilities reader).
 *
 * The server fetches its own site — the front page, its newest published post, the dashboard logged in,
 * the REST API index, the login page — and reports what each answered; and it reports the PHP error log's size and the
 * lines written after a given offset (the baseline's size). Nothing here is an address the model chose:
 * the pages are WordPress's own URLs.
 *
 * The dashboard is fetched with a session made for this probe alone (WP_Session_Tokens, as a login makes
 * one), valid two minutes, destroyed before the probe ends; its cookies are never printed.
 *
 * Request: {"connect": "127.0.0.1:8080" | null, "log_from": <bytes> | null, "fresh": ["plugins" |
 * "themes" | "core" | "languages"]}. `connect` (tests and the sandbox) sends each request to that address
 * over plain HTTP with the site's host name, as curl's --connect-to would; the site answers as itself.
 * `fresh` names the code a change just replaced: the web server's opcache is told to forget it first.
 *
 * Prints one JSON object: {"pages": [{"name", "url", "status", "bytes", "fatal", "ms", "redirect"}],
 * "log": {"found", "size", "lines"}, "fresh": null | {"reached", "enabled", "invalidated", "restricted",
 * "validate_timestamps", "revalidate_freq", "waited"}, "leftovers": [{"backup", "made", "holds"}],
 * "address": {"home", "siteurl"}}.
 */

$wp_agent_probe = static function ( array $request ): array {
	$home    = home_url( '/' );
	$site    = wp_parse_url( $home );
	$connect = isset( $request['connect'] ) && is_string( $request['connect'] ) ? $request['connect'] : null;
	$marks   = array( 'Fatal error', 'Parse error', 'Uncaught Error', 'Uncaught Exception', 'wp-die-message' );

	$get = static function ( string $url, array $cookies = array(), array $headers = array() ) use ( $connect, $site ) {
		$target = $url;
		if ( null !== $connect ) {
			$parts           = wp_parse_url( $url );
			$target          = 'http://' . $connect . ( $parts['path'] ?? '/' ) . ( isset( $parts['query'] ) ? '?' . $parts['query'] : '' );
			$headers['Host'] = $site['host'] ?? '';
		}
		return wp_remote_get(
			$target,
			array(
				'timeout'            => 10,
				'redirection'        => 0,
				'sslverify'          => false, // the server's own site, often by its own certificate
				'reject_unsafe_urls' => false, // its own address may be a private one
				'headers'            => $headers,
				'cookies'            => $cookies,
				'user-agent'         => 'wp-agent-health-probe',
			)
		);
	};

	$fetch = static function ( string $name, string $url, array $cookies = array() ) use ( $get, $marks ): array {
		$started  = microtime( true );
		$response = $get( $url, $cookies );
		$ms = (int) round( ( microtime( true ) - $started ) * 1000 );
		if ( is_wp_error( $response ) ) {
			return array( 'name' => $name, 'url' => $url, 'status' => null, 'error' => $response->get_error_message(), 'ms' => $ms );
		}
		$body  = (string) wp_remote_retrieve_body( $response );
		$fatal = array_values( array_filter( $marks, static fn( $mark ) => false !== strpos( $body, $mark ) ) );
		return array(
			'name'     => $name,
			'url'      => $url,
			'status'   => (int) wp_remote_retrieve_response_code( $response ),
			'bytes'    => strlen( trim( $body ) ),
			'fatal'    => $fatal,
			'rest'     => 'rest' === $name ? is_array( json_decode( $body, true )['namespaces'] ?? null ) : null,
			'admin'    => 'admin' === $name ? false !== strpos( $body, 'id="wpbody"' ) : null,
			'login'    => 'login' === $name ? false !== strpos( $body, 'id="loginform"' ) : null,
			'redirect' => (string) wp_remote_retrieve_header( $response, 'location' ),
			'ms'       => $ms,
		);
	};

	// Code just changed on disk may still run from the web server's opcache: PHP looks at a file's time
	// only every opcache.revalidate_freq seconds (never with validate_timestamps off), and WP-CLI's own
	// opcache_invalidate reaches the command line's cache, not the web server's. Before the pages are
	// fetched, a one-time script staged in WordPress's folder — an unguessable name, answering only with
	// its token, removed at once — invalidates the changed folders' scripts in the web server's own cache.
	$dirs = array();
	foreach ( (array) ( $request['fresh'] ?? array() ) as $kind ) {
		$found = array( 'plugins' => array( WP_PLUGIN_DIR, WPMU_PLUGIN_DIR ), 'themes' => array( get_theme_root() ), 'core' => array( ABSPATH ), 'languages' => array( WP_LANG_DIR ) )[ $kind ] ?? array();
		foreach ( $found as $dir ) {
			$dirs[] = rtrim( $dir, '/' ) . '/';
			$real   = realpath( $dir );
			if ( false !== $real ) {
				$dirs[] = rtrim( $real, '/' ) . '/';
			}
		}
	}
	foreach ( (array) glob( ABSPATH . 'wp-agent-fresh-*.php' ) as $old ) {
		if ( filemtime( $old ) < time() - 600 ) {
			unlink( $old ); // left by a probe that was stopped before it removed its own
		}
	}
	$fresh = null;
	if ( $dirs ) {
		$token = bin2hex( random_bytes( 32 ) );
		$name  = 'wp-agent-fresh-' . bin2hex( random_bytes( 16 ) ) . '.php';
		$file  = ABSPATH . $name;
		$code  = '<?php' . "\n"
			. 'if ( ! hash_equals( ' . var_export( hash( 'sha256', $token ), true ) . ", hash( 'sha256', (string) ( \$_SERVER['HTTP_X_WP_AGENT_FRESH'] ?? '' ) ) ) ) { http_response_code( 404 ); exit; }\n"
			. '$dirs = ' . var_export( array_values( array_unique( $dirs ) ), true ) . ";\n"
			. <<<'PHP'
$answer = array( 'enabled' => false, 'invalidated' => 0, 'restricted' => false );
if ( function_exists( 'opcache_get_status' ) && ini_get( 'opcache.enable' ) ) {
	$status = @opcache_get_status( true );
	if ( is_array( $status ) ) {
		$answer['enabled'] = ! empty( $status['opcache_enabled'] );
		foreach ( array_keys( (array) ( $status['scripts'] ?? array() ) ) as $script ) {
			foreach ( $dirs as $dir ) {
				if ( 0 === strpos( $script, $dir ) ) {
					$answer['invalidated'] += opcache_invalidate( $script, true ) ? 1 : 0;
					break;
				}
			}
		}
	} else {
		$answer['enabled']    = true;
		$answer['restricted'] = true; // opcache.restrict_api keeps this script out of the cache's API
	}
}
$answer['validate_timestamps'] = (bool) ini_get( 'opcache.validate_timestamps' );
$answer['revalidate_freq']     = (int) ini_get( 'opcache.revalidate_freq' );
header( 'Content-Type: application/json' );
echo json_encode( $answer );
PHP;
		$fresh = array( 'reached' => false );
		if ( false !== file_put_contents( $file, $code, LOCK_EX ) ) {
			try {
				$url      = is_multisite() ? network_site_url( '/' . $name ) : site_url( '/' . $name );
				$response = $get( $url, array(), array( 'X-WP-Agent-Fresh' => $token ) );
				$answer   = is_wp_error( $response ) ? null : json_decode( (string) wp_remote_retrieve_body( $response ), true );
				if ( is_array( $answer ) ) {
					$fresh = array( 'reached' => true ) + $answer;
				}
			} finally {
				unlink( $file );
			}
		}
		// Where the web server's cache could not be told, it sees new code once it looks at the files again.
		if ( empty( $fresh['reached'] ) || ! empty( $fresh['restricted'] ) ) {
			$fresh['waited'] = ( $fresh['validate_timestamps'] ?? true ) ? min( 10, ( $fresh['revalidate_freq'] ?? (int) ini_get( 'opcache.revalidate_freq' ) ) + 1 ) : 0;
			sleep( $fresh['waited'] );
		}
	}

	$pages   = array( $fetch( 'front', $home ) );
	$newest  = get_posts( array( 'numberposts' => 1, 'post_status' => 'publish', 'post_type' => 'post', 'suppress_filters' => false ) );
	$pages[] = $newest ? $fetch( 'post', (string) get_permalink( $newest[0] ) ) : array( 'name' => 'post', 'url' => null, 'status' => null, 'absent' => true );

	$admins = is_multisite() ? get_super_admins() : array();
	$user   = $admins ? get_user_by( 'login', $admins[0] ) : null;
	if ( ! $user ) {
		$found = get_users( array( 'role' => 'administrator', 'number' => 1, 'orderby' => 'ID' ) );
		$user  = $found ? $found[0] : null;
	}
	if ( $user ) {
		$expires = time() + 120;
		$tokens  = WP_Session_Tokens::get_instance( $user->ID );
		$token   = $tokens->create( $expires );
		$secure  = 'https' === ( $site['scheme'] ?? '' );
		$cookies = array(
			( $secure ? SECURE_AUTH_COOKIE : AUTH_COOKIE ) => wp_generate_auth_cookie( $user->ID, $expires, $secure ? 'secure_auth' : 'auth', $token ),
			LOGGED_IN_COOKIE => wp_generate_auth_cookie( $user->ID, $expires, 'logged_in', $token ),
		);
		try {
			$pages[] = $fetch( 'admin', admin_url( '/' ), $cookies );
		} finally {
			$tokens->destroy( $token );
		}
	} else {
		$pages[] = array( 'name' => 'admin', 'url' => admin_url( '/' ), 'status' => null, 'absent' => true );
	}
	$pages[] = $fetch( 'rest', get_rest_url() );
	// The login page as the site names it (a plugin that moves it filters this URL): a change that breaks
	// only wp-login.php leaves every page working and locks the administrators out.
	$pages[] = $fetch( 'login', wp_login_url() );

	// WordPress points PHP's error_log at wp-content/debug.log (or WP_DEBUG_LOG's path) when it logs.
	// A log file not written yet counts as an empty one; syslog and devices are no file to read.
	$path = (string) ini_get( 'error_log' );
	$file = '' !== $path && 'syslog' !== $path && 0 !== strpos( $path, '/dev/' ) && ( is_file( $path ) ? is_readable( $path ) : is_dir( dirname( $path ) ) );
	$log  = array( 'found' => $file, 'size' => null, 'lines' => array() );
	if ( $log['found'] ) {
		clearstatcache( true, $path );
		$log['size'] = is_file( $path ) ? (int) filesize( $path ) : 0;
		$from        = isset( $request['log_from'] ) && is_int( $request['log_from'] ) ? $request['log_from'] : null;
		if ( null !== $from && $log['size'] > $from ) {
			$start  = max( $from, $log['size'] - 65536 );
			$handle = fopen( $path, 'rb' );
			if ( $handle ) {
				fseek( $handle, $start );
				$text = (string) fread( $handle, $log['size'] - $start );
				fclose( $handle );
				$lines        = array_values( array_filter( array_map( 'trim', explode( "\n", $text ) ), 'strlen' ) );
				$log['lines'] = array_map( static fn( $line ) => substr( $line, 0, 500 ), array_slice( $lines, -20 ) );
			}
		}
	}
	// Backups the code guard made for a change that never finished (stopped midway): never removed by
	// themselves (they are the way back), so the person is told.
	$leftovers = array();
	foreach ( (array) glob( rtrim( sys_get_temp_dir(), '/' ) . '/wp-agent-guard-*', GLOB_ONLYDIR ) as $dir ) {
		if ( 1 === preg_match( '#/wp-agent-guard-[0-9a-f]{32}$#', $dir ) && filemtime( $dir ) < time() - HOUR_IN_SECONDS ) {
			$state       = is_readable( "$dir/state.json" ) ? (array) json_decode( (string) file_get_contents( "$dir/state.json" ), true ) : array();
			$what        = array_map( static fn( $file ) => ( $file['kind'] ?? '' ) . ':' . ( $file['slug'] ?? '' ), (array) ( $state['files'] ?? array() ) );
			$leftovers[] = array(
				'backup' => $dir,
				'made'   => gmdate( 'Y-m-d H:i', (int) filemtime( $dir ) ) . ' UTC',
				'holds'  => array_merge(
					$what,
					isset( $state['core']['version'] ) ? array( 'core:' . $state['core']['version'] ) : array(),
					// its copies of tables, in the site's own database (drop them with the folder)
					array_map( static fn( $made ) => 'table:' . $made, array_values( (array) ( $state['db']['copies'] ?? array() ) ) )
				),
			);
		}
	}
	return array(
		'pages'     => $pages,
		'log'       => $log,
		'fresh'     => $fresh,
		'leftovers' => $leftovers,
		'address'   => array( 'home' => home_url( '/' ), 'siteurl' => site_url( '/' ) ),
	);
};

echo wp_json_encode( $wp_agent_probe( (array) json_decode( $args[0] ?? '{}', true ) ) );
