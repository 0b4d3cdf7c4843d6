<?php
/**
 * What a guarded code change needs to go back, run on the site's own server with
 * `wp eval-file <this file> '<request JSON>'` (staged for the one command, removed after it).
 *
 * snapshot {"plugins": [slugs], "themes": [slugs], "all_plugins": bool}: copies each named plugin's and
 *   theme's files into a new private directory outside the web root (0700, below the system's temporary
 *   directory: a backup of PHP files under the web root would be code reachable by URL) and records what
 *   was installed, each version, which plugins were active (on the site and the network) and the theme.
 * restore {"backup": dir, "state": {...}}: puts the files back exactly (a plugin or theme absent before is
 *   removed), and the active plugins and theme as they were — the options themselves, so no hook of the
 *   broken code runs on the way back.
 * discard {"backup": dir}: removes the backup.
 *
 * Prints one JSON object. Only directories this script made (wp-agent-guard-<32 hex>) are ever removed.
 */

$wp_agent_guard = static function ( array $request ): array {
	$base   = rtrim( sys_get_temp_dir(), '/' );
	$copy   = static function ( string $from, string $to ) use ( &$copy ): void {
		if ( is_link( $from ) ) {
			return; // never follow a link out of the plugin
		}
		if ( is_dir( $from ) ) {
			mkdir( $to, 0700 );
			foreach ( scandir( $from ) as $entry ) {
				if ( '.' !== $entry && '..' !== $entry ) {
					$copy( "$from/$entry", "$to/$entry" );
				}
			}
			return;
		}
		copy( $from, $to );
	};
	$remove = static function ( string $path ) use ( &$remove ): void {
		if ( is_dir( $path ) && ! is_link( $path ) ) {
			foreach ( scandir( $path ) as $entry ) {
				if ( '.' !== $entry && '..' !== $entry ) {
					$remove( "$path/$entry" );
				}
			}
			rmdir( $path );
		} elseif ( file_exists( $path ) || is_link( $path ) ) {
			unlink( $path );
		}
	};
	$ours = static function ( $dir ) use ( $base ): bool {
		return is_string( $dir ) && 1 === preg_match( '#^' . preg_quote( $base, '#' ) . '/wp-agent-guard-[0-9a-f]{32}$#', $dir ) && is_dir( $dir );
	};
	$places = static function ( array $request ): array {
		if ( ! function_exists( 'get_plugins' ) ) {
			require_once ABSPATH . 'wp-admin/includes/plugin.php';
		}
		$plugins = array();
		$names   = array_map( 'strval', $request['plugins'] ?? array() );
		foreach ( array_keys( get_plugins() ) as $file ) {
			$slug = false === strpos( $file, '/' ) ? preg_replace( '/\.php$/', '', $file ) : dirname( $file );
			if ( ! empty( $request['all_plugins'] ) || in_array( $slug, $names, true ) ) {
				$plugins[ $slug ] = false === strpos( $file, '/' ) ? WP_PLUGIN_DIR . "/$file" : WP_PLUGIN_DIR . "/$slug";
			}
		}
		foreach ( $names as $slug ) {
			if ( ! isset( $plugins[ $slug ] ) && 1 === preg_match( '/^[a-z0-9][a-z0-9_\-]*$/', $slug ) ) {
				$plugins[ $slug ] = WP_PLUGIN_DIR . "/$slug"; // not installed yet: absent before
			}
		}
		$themes = array();
		foreach ( array_map( 'strval', $request['themes'] ?? array() ) as $slug ) {
			if ( 1 === preg_match( '/^[a-z0-9][a-z0-9_\-]*$/', $slug ) ) {
				$themes[ $slug ] = get_theme_root( $slug ) . "/$slug";
			}
		}
		return array( 'plugins' => $plugins, 'themes' => $themes );
	};

	$op = $request['op'] ?? '';
	if ( 'snapshot' === $op ) {
		$dir = $base . '/wp-agent-guard-' . bin2hex( random_bytes( 16 ) );
		mkdir( $dir, 0700 );
		$state = array(
			'active_plugins'          => get_option( 'active_plugins', array() ),
			'active_sitewide_plugins' => is_multisite() ? get_site_option( 'active_sitewide_plugins', array() ) : null,
			'stylesheet'              => get_option( 'stylesheet' ),
			'template'                => get_option( 'template' ),
			'files'                   => array(),
		);
		foreach ( $places( $request ) as $kind => $found ) {
			foreach ( $found as $slug => $path ) {
				$present = file_exists( $path );
				$saved   = "$dir/$kind-$slug";
				if ( $present ) {
					$copy( $path, $saved );
				}
				$state['files'][] = array( 'kind' => $kind, 'slug' => $slug, 'path' => $path, 'saved' => $present ? $saved : null );
			}
		}
		return array( 'backup' => $dir, 'state' => $state );
	}
	if ( ! $ours( $request['backup'] ?? null ) ) {
		return array( 'error' => 'not a backup of ours' );
	}
	$dir = $request['backup'];
	if ( 'restore' === $op ) {
		$state    = (array) ( $request['state'] ?? array() );
		$restored = array();
		foreach ( (array) ( $state['files'] ?? array() ) as $file ) {
			$path  = (string) $file['path'];
			$inside = 0 === strpos( $path, WP_PLUGIN_DIR . '/' ) || 0 === strpos( $path, get_theme_root() . '/' );
			if ( ! $inside ) {
				continue;
			}
			$remove( $path );
			if ( ! empty( $file['saved'] ) && 0 === strpos( (string) $file['saved'], "$dir/" ) ) {
				$copy( (string) $file['saved'], $path );
			}
			$restored[] = $file['kind'] . ':' . $file['slug'];
		}
		update_option( 'active_plugins', $state['active_plugins'] ?? array() );
		if ( is_multisite() && is_array( $state['active_sitewide_plugins'] ?? null ) ) {
			update_site_option( 'active_sitewide_plugins', $state['active_sitewide_plugins'] );
		}
		if ( get_option( 'stylesheet' ) !== ( $state['stylesheet'] ?? null ) ) {
			switch_theme( (string) $state['stylesheet'] ); // back to the theme that worked, widgets and all
		}
		wp_clean_plugins_cache();
		return array( 'restored' => $restored );
	}
	if ( 'discard' === $op ) {
		$remove( $dir );
		return array( 'discarded' => true );
	}
	return array( 'error' => 'unknown op' );
};

echo wp_json_encode( $wp_agent_guard( (array) json_decode( $args[0] ?? '{}', true ) ) );
