<?php
/**
 * What a guarded code change needs to go back, run on the site's own server with
 * `wp eval-file <this file> '<request JSON>'` (staged for the one command, removed after it).
 *
 * snapshot {"plugins": [slugs], "themes": [slugs], "all_plugins": bool, "core": null | {"minor": bool,
 *   "version": str | null}}: copies each named plugin's and theme's files into a new private directory
 *   outside the web root (0700, below the system's temporary directory: a backup of PHP files under the
 *   web root would be code reachable by URL) and records what was installed, which plugins were active
 *   (on the site and the network) and the theme. For core: WordPress's own files (wp-admin, wp-includes
 *   and the files beside them, never wp-config.php) and the version. The database the change may write is
 *   copied inside its own database: every table when a core update may be a major one (another branch: it
 *   changes the database), else the options tables; the names of all tables are recorded (those the change
 *   adds are dropped on the way back). What the backup holds is written in it (state.json): a backup left by a change that never
 *   finished still says what it is.
 *   With "languages": true, the whole languages folder (translations load as PHP) and the site's language.
 * restore_files {"backup": dir}: puts the files back exactly (a plugin or theme absent before is removed,
 *   core's folders replaced whole). Needs no WordPress: run with --skip-wordpress, it works when the change
 *   left WordPress unable to load at all.
 * restore_state {"backup": dir}: the tables back as they were (tables the change added dropped), then the
 *   active plugins and theme — the options themselves, so no hook of the broken code runs on the way back
 *   (run with --skip-plugins --skip-themes).
 * discard {"backup": dir}: removes the backup (its table copies too).
 * (A backup a change stopped midway left behind is named by the health probe, health_probe.php.)
 *
 * Prints one JSON object. Only directories this script made (wp-agent-guard-<32 hex>) and tables it made
 * (wpagentbak_<8 hex>_<n>) are ever removed.
 */

$wp_agent_guard = static function ( array $request ): array {
	$base   = rtrim( sys_get_temp_dir(), '/' );
	// Copies keep each file's mode and time, and its owner where we may set it (as root): what comes
	// back is readable by the web server exactly as before (the backup's own folder is what is private).
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
		} else {
			copy( $from, $to );
		}
		chmod( $to, fileperms( $from ) & 0777 );
		touch( $to, (int) filemtime( $from ) );
		if ( function_exists( 'posix_geteuid' ) && 0 === posix_geteuid() ) {
			chown( $to, (int) fileowner( $from ) );
			chgrp( $to, (int) filegroup( $from ) );
		}
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
	$ours     = static function ( $dir ) use ( $base ): bool {
		return is_string( $dir ) && 1 === preg_match( '#^' . preg_quote( $base, '#' ) . '/wp-agent-guard-[0-9a-f]{32}$#', $dir ) && is_dir( $dir );
	};
	$state_of = static function ( string $dir ): array {
		$text = is_file( "$dir/state.json" ) ? file_get_contents( "$dir/state.json" ) : '';
		return (array) json_decode( (string) $text, true );
	};
	$table_copy = '/^wpagentbak_[0-9a-f]{8}_\d+$/';
	$core_entry = '/^(wp-admin|wp-includes|wp-[a-z-]+\.php|index\.php|xmlrpc\.php|license\.txt|readme\.html)$/';

	$op = $request['op'] ?? '';
	if ( 'snapshot' !== $op && ! $ours( $request['backup'] ?? null ) ) {
		return array( 'error' => 'not a backup of ours' );
	}
	$dir = (string) ( $request['backup'] ?? '' );

	if ( 'restore_files' === $op ) { // no WordPress here: nothing but PHP and what the backup recorded
		$state    = $state_of( $dir );
		$roots    = array_map( static fn( $root ) => rtrim( (string) $root, '/' ) . '/', (array) ( $state['roots'] ?? array() ) );
		$restored = array();
		foreach ( (array) ( $state['files'] ?? array() ) as $file ) {
			$path   = (string) ( $file['path'] ?? '' );
			// Inside the plugins' or themes' folder; the languages folder is put back whole.
			$whole  = 'languages' === ( $file['kind'] ?? '' ) ? rtrim( $path, '/' ) . '/' : $path;
			$inside = array_filter( $roots, static fn( $root ) => '/' !== $root && 0 === strpos( $whole, $root ) && false === strpos( $path, '..' ) );
			if ( ! $inside ) {
				continue;
			}
			$remove( $path );
			if ( ! empty( $file['saved'] ) && 0 === strpos( (string) $file['saved'], "$dir/" ) ) {
				$copy( (string) $file['saved'], $path );
			}
			$restored[] = $file['kind'] . ':' . $file['slug'];
		}
		$core = (array) ( $state['core'] ?? array() );
		if ( ! empty( $core['abspath'] ) ) {
			$abspath = rtrim( (string) $core['abspath'], '/' ) . '/';
			foreach ( (array) ( $core['files'] ?? array() ) as $entry ) {
				if ( 1 === preg_match( $core_entry, (string) $entry ) && file_exists( "$dir/core/$entry" ) ) {
					$remove( $abspath . $entry );
					$copy( "$dir/core/$entry", $abspath . $entry );
				}
			}
			if ( empty( $core['maintenance'] ) && file_exists( $abspath . '.maintenance' ) ) {
				unlink( $abspath . '.maintenance' ); // left by an update that stopped midway
			}
			$restored[] = 'core:' . ( $core['version'] ?? '' );
		}
		if ( function_exists( 'opcache_reset' ) ) {
			opcache_reset(); // this process's own cache (the web server's is refreshed by the probe)
		}
		return array( 'restored' => $restored );
	}

	// Everything below runs with WordPress loaded.
	global $wpdb;
	$tables      = static function () use ( $wpdb ): array {
		$names = (array) $wpdb->get_col( $wpdb->prepare( 'SHOW TABLES LIKE %s', $wpdb->esc_like( $wpdb->base_prefix ) . '%' ) );
		return array_values( array_filter( $names, static fn( $name ) => 0 !== strpos( (string) $name, 'wpagentbak_' ) ) );
	};
	$quoted      = static fn( string $name ): string => '`' . str_replace( '`', '``', $name ) . '`';
	$drop_copies = static function ( array $state ) use ( $wpdb, $table_copy ): void {
		foreach ( (array) ( $state['db']['copies'] ?? array() ) as $made ) {
			if ( 1 === preg_match( $table_copy, (string) $made ) ) {
				$wpdb->query( "DROP TABLE IF EXISTS `$made`" );
			}
		}
	};

	if ( 'snapshot' === $op ) {
		if ( ! function_exists( 'get_plugins' ) ) {
			require_once ABSPATH . 'wp-admin/includes/plugin.php';
		}
		$dir = $base . '/wp-agent-guard-' . bin2hex( random_bytes( 16 ) );
		if ( ! mkdir( $dir, 0700 ) || is_link( $dir ) ) { // a new folder of ours, never one found there
			return array( 'error' => 'the backup folder could not be made' );
		}
		$state = array(
			'active_plugins'          => get_option( 'active_plugins', array() ),
			'active_sitewide_plugins' => is_multisite() ? get_site_option( 'active_sitewide_plugins', array() ) : null,
			'stylesheet'              => get_option( 'stylesheet' ),
			'template'                => get_option( 'template' ),
			'multisite'               => is_multisite(),
			'roots'                   => array( WP_PLUGIN_DIR, get_theme_root(), WP_LANG_DIR ),
			'wplang'                  => get_option( 'WPLANG' ),
			'files'                   => array(),
			'core'                    => null,
		);
		$names = array_map( 'strval', $request['plugins'] ?? array() );
		$found = array();
		foreach ( array_keys( get_plugins() ) as $file ) {
			$slug = false === strpos( $file, '/' ) ? preg_replace( '/\.php$/', '', $file ) : dirname( $file );
			if ( ! empty( $request['all_plugins'] ) || in_array( $slug, $names, true ) ) {
				$found[] = array( 'plugins', $slug, false === strpos( $file, '/' ) ? WP_PLUGIN_DIR . "/$file" : WP_PLUGIN_DIR . "/$slug" );
			}
		}
		foreach ( $names as $slug ) {
			if ( ! in_array( $slug, array_column( $found, 1 ), true ) && 1 === preg_match( '/^[a-z0-9][a-z0-9_\-]*$/', $slug ) ) {
				$found[] = array( 'plugins', $slug, WP_PLUGIN_DIR . "/$slug" ); // not installed yet: absent before
			}
		}
		foreach ( array_map( 'strval', $request['themes'] ?? array() ) as $slug ) {
			if ( 1 === preg_match( '/^[a-z0-9][a-z0-9_\-]*$/', $slug ) ) {
				$found[] = array( 'themes', $slug, get_theme_root( $slug ) . "/$slug" );
			}
		}
		if ( ! empty( $request['languages'] ) ) {
			$found[] = array( 'languages', 'all', WP_LANG_DIR );
		}
		foreach ( $found as list( $kind, $slug, $path ) ) {
			$present = file_exists( $path );
			$saved   = "$dir/$kind-$slug";
			if ( $present ) {
				$copy( $path, $saved );
			}
			$state['files'][] = array( 'kind' => $kind, 'slug' => $slug, 'path' => $path, 'saved' => $present ? $saved : null );
		}
		if ( ! empty( $request['core'] ) ) {
			$core    = (array) $request['core'];
			$target  = null;
			$current = wp_get_wp_version();
			if ( ! empty( $core['version'] ) ) {
				$target = (string) $core['version'];
			} elseif ( empty( $core['minor'] ) ) { // the offer WP-CLI will take: WordPress's own first one
				if ( ! function_exists( 'wp_version_check' ) ) {
					require_once ABSPATH . WPINC . '/update.php';
				}
				wp_version_check();
				$offers = get_site_transient( 'update_core' );
				$target = isset( $offers->updates[0]->version ) ? (string) $offers->updates[0]->version : null;
			}
			$branch = static fn( string $version ): string => implode( '.', array_slice( explode( '.', $version ), 0, 2 ) );
			$major  = empty( $core['minor'] ) && ( null === $target || $branch( $target ) !== $branch( $current ) );
			$state['core'] = array(
				'version'     => $current,
				'target'      => $target,
				'major'       => $major,
				'abspath'     => ABSPATH,
				'files'       => array(),
				'maintenance' => file_exists( ABSPATH . '.maintenance' ),
			);
			mkdir( "$dir/core", 0700 );
			foreach ( scandir( ABSPATH ) as $entry ) {
				if ( 1 === preg_match( $core_entry, $entry ) && 'wp-config.php' !== $entry ) {
					$copy( ABSPATH . $entry, "$dir/core/$entry" );
					$state['core']['files'][] = $entry;
				}
			}
		}
		// The database the change may write, copied beside itself in the same database (no dump leaves the
		// server; going back is a rename per table): every table for a major core update; for any other
		// change the options (the site's, and the network's), where activation hooks, upgrade routines and
		// theme switches write — a plugin that moves the site's address on activation is taken back with
		// it. Tables the change adds are dropped on the way back (every table's name is recorded).
		$all         = $tables();
		$copied      = ! empty( $state['core']['major'] ) ? $all : array_values( array_intersect( $all, array_filter( array( $wpdb->options, is_multisite() ? $wpdb->sitemeta : null ) ) ) );
		$tag         = substr( basename( $dir ), -8 );
		$state['db'] = array( 'tables' => $all, 'copies' => array() );
		foreach ( $copied as $i => $table ) {
			$made                             = "wpagentbak_{$tag}_{$i}";
			$state['db']['copies'][ $table ] = $made;
			$done = false !== $wpdb->query( "CREATE TABLE `$made` LIKE " . $quoted( $table ) )
				&& false !== $wpdb->query( "INSERT INTO `$made` SELECT * FROM " . $quoted( $table ) );
			if ( ! $done ) {
				$error = $wpdb->last_error;
				$drop_copies( $state );
				$remove( $dir );
				return array( 'error' => 'the database could not be copied: ' . $error );
			}
		}
		file_put_contents( "$dir/state.json", wp_json_encode( $state ) );
		return array( 'backup' => $dir, 'state' => $state );
	}
	if ( 'restore_state' === $op ) {
		$state    = $state_of( $dir );
		$restored = array();
		if ( is_array( $state['db']['tables'] ?? null ) && $state['db']['tables'] ) {
			foreach ( $tables() as $table ) {
				if ( ! in_array( $table, $state['db']['tables'], true ) ) {
					$wpdb->query( 'DROP TABLE ' . $quoted( $table ) ); // made by the change
				}
			}
			foreach ( (array) ( $state['db']['copies'] ?? array() ) as $table => $made ) {
				if ( 1 === preg_match( $table_copy, (string) $made ) ) {
					$wpdb->query( 'DROP TABLE IF EXISTS ' . $quoted( (string) $table ) );
					$wpdb->query( "RENAME TABLE `$made` TO " . $quoted( (string) $table ) );
				}
			}
			wp_cache_flush();
			$restored[]            = 'database';
			$state['db']['copies'] = array(); // renamed back: nothing left to drop
			file_put_contents( "$dir/state.json", wp_json_encode( $state ) );
		}
		if ( array_key_exists( 'wplang', $state ) && get_option( 'WPLANG' ) !== $state['wplang'] ) {
			update_option( 'WPLANG', (string) $state['wplang'] );
		}
		update_option( 'active_plugins', $state['active_plugins'] ?? array() );
		if ( is_multisite() && is_array( $state['active_sitewide_plugins'] ?? null ) ) {
			update_site_option( 'active_sitewide_plugins', $state['active_sitewide_plugins'] );
		}
		if ( isset( $state['stylesheet'] ) && get_option( 'stylesheet' ) !== $state['stylesheet'] ) {
			switch_theme( (string) $state['stylesheet'] ); // back to the theme that worked, widgets and all
		}
		wp_clean_plugins_cache();
		$restored[] = 'active plugins and theme';
		return array( 'restored' => $restored );
	}
	if ( 'discard' === $op ) {
		$drop_copies( $state_of( $dir ) );
		$remove( $dir );
		return array( 'discarded' => true );
	}
	return array( 'error' => 'unknown op' );
};

echo json_encode( $wp_agent_guard( (array) json_decode( $args[0] ?? '{}', true ) ) );
