<?php
/**
 * Plugin Name: wp-agent sandbox update server
 * Description: WordPress.org's update API and downloads answered by the sandbox's loopback update server.
 *
 * Written into the sandbox's mu-plugins by sandbox/update_server.py while its server runs (and removed
 * after), with the server's address in place of __SERVER__. Every request WordPress makes to
 * api.wordpress.org or downloads.wordpress.org — the update checks, plugin and theme information, the
 * packages — goes to that server instead, path and query kept; nothing else is touched. WP-CLI downloads
 * core packages itself (not through WordPress's HTTP API) unless a filter answers first: that filter is
 * answered here too.
 */

const WP_AGENT_UPDATE_SERVER = '__SERVER__';

function wp_agent_update_server_url( string $url ): ?string {
	$parts = wp_parse_url( $url );
	$host  = is_array( $parts ) ? ( $parts['host'] ?? '' ) : '';
	if ( ! in_array( $host, array( 'api.wordpress.org', 'downloads.wordpress.org' ), true ) ) {
		return null;
	}
	$query = isset( $parts['query'] ) ? '?' . $parts['query'] : '';
	return WP_AGENT_UPDATE_SERVER . '/' . $host . ( $parts['path'] ?? '/' ) . $query;
}

add_filter(
	'pre_http_request',
	static function ( $pre, $args, $url ) {
		$local = wp_agent_update_server_url( (string) $url );
		if ( null === $local ) {
			return $pre;
		}
		$args['reject_unsafe_urls'] = false; // the update server is on loopback
		return wp_remote_request( $local, $args );
	},
	10,
	3
);

add_filter(
	'upgrader_pre_download',
	static function ( $reply, $package ) {
		if ( false !== $reply || ! is_string( $package ) || null === wp_agent_update_server_url( $package ) ) {
			return $reply;
		}
		if ( ! function_exists( 'download_url' ) ) {
			require_once ABSPATH . 'wp-admin/includes/file.php';
		}
		return download_url( $package ); // through the filter above
	},
	10,
	2
);
