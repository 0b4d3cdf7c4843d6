<?php
/**
 * The site health probe, run on the site's own server with `wp eval-file <this file> '<request JSON>'`
 * (staged for the one command and removed after it, like the Abilities reader).
 *
 * The server fetches its own site — the front page, its newest published post, the dashboard logged in,
 * the REST API index — and reports what each answered; and it reports the PHP error log's size and the
 * lines written after a given offset (the baseline's size). Nothing here is an address the model chose:
 * the pages are WordPress's own URLs.
 *
 * The dashboard is fetched with a session made for this probe alone (WP_Session_Tokens, as a login makes
 * one), valid two minutes, destroyed before the probe ends; its cookies are never printed.
 *
 * Request: {"connect": "127.0.0.1:8080" | null, "log_from": <bytes> | null}. `connect` (tests and the
 * sandbox) sends each request to that address over plain HTTP with the site's host name, as curl's
 * --connect-to would; the site answers as itself.
 *
 * Prints one JSON object: {"pages": [{"name", "url", "status", "bytes", "fatal", "ms", "redirect"}],
 * "log": {"found", "size", "lines"}}.
 */

$wp_agent_probe = static function ( array $request ): array {
	$home    = home_url( '/' );
	$site    = wp_parse_url( $home );
	$connect = isset( $request['connect'] ) && is_string( $request['connect'] ) ? $request['connect'] : null;
	$marks   = array( 'Fatal error', 'Parse error', 'Uncaught Error', 'Uncaught Exception', 'wp-die-message' );

	$fetch = static function ( string $name, string $url, array $cookies = array() ) use ( $connect, $site, $marks ): array {
		$target  = $url;
		$headers = array();
		if ( null !== $connect ) {
			$parts   = wp_parse_url( $url );
			$target  = 'http://' . $connect . ( $parts['path'] ?? '/' ) . ( isset( $parts['query'] ) ? '?' . $parts['query'] : '' );
			$headers = array( 'Host' => $site['host'] ?? '' );
		}
		$started  = microtime( true );
		$response = wp_remote_get(
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
			'redirect' => (string) wp_remote_retrieve_header( $response, 'location' ),
			'ms'       => $ms,
		);
	};

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
	return array( 'pages' => $pages, 'log' => $log );
};

echo wp_json_encode( $wp_agent_probe( (array) json_decode( $args[0] ?? '{}', true ) ) );
