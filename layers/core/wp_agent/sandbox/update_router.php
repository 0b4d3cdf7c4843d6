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

// WP-CLI asks WordPress.org some things itself, not through WordPress's HTTP API (the versions behind
// `plugin update --minor`, core's checksums after `core update`): its HTTP library gets a transport
// that sends those requests to the update server too, and every other one as before (curl).
if ( interface_exists( '\WpOrg\Requests\Transport' ) && class_exists( '\WpOrg\Requests\Transport\Curl' ) ) {
	final class WP_Agent_Update_Server_Transport implements \WpOrg\Requests\Transport {
		private $curl;

		public function __construct() {
			$this->curl = new \WpOrg\Requests\Transport\Curl();
		}

		public function request( $url, $headers = array(), $data = array(), $options = array() ) {
			return $this->curl->request( wp_agent_update_server_url( (string) $url ) ?? $url, $headers, $data, $options );
		}

		public function request_multiple( $requests, $options ) {
			foreach ( $requests as $id => $request ) {
				$requests[ $id ]['url'] = wp_agent_update_server_url( (string) $request['url'] ) ?? $request['url'];
			}
			return $this->curl->request_multiple( $requests, $options );
		}

		public static function test( $capabilities = array() ) {
			return \WpOrg\Requests\Transport\Curl::test( $capabilities );
		}
	}
	$wp_agent_transports = new ReflectionProperty( \WpOrg\Requests\Requests::class, 'transports' );
	$wp_agent_transports->setAccessible( true );
	$wp_agent_transports->setValue( null, array( WP_Agent_Update_Server_Transport::class => WP_Agent_Update_Server_Transport::class ) );
	\WpOrg\Requests\Requests::$transport = array();
}
