<?php
// The sandbox's front (sandbox/http_front.py): PHP's built-in server answering as the site's own
// address, https://example.test, on a loopback port. A sub-directory network's sites share the
// WordPress files: /en/wp-admin/edit.php runs /wp-admin/edit.php with the request's own URI, which
// tells WordPress the site.
$_SERVER['HTTPS']       = 'on';
$_SERVER['SERVER_PORT'] = '443';
$_SERVER['HTTP_HOST']   = getenv( 'WP_AGENT_FRONT_HOST' );
$_SERVER['SERVER_NAME'] = $_SERVER['HTTP_HOST'];

$root = rtrim( $_SERVER['DOCUMENT_ROOT'], '/' );
$path = rawurldecode( (string) parse_url( $_SERVER['REQUEST_URI'], PHP_URL_PATH ) );
if ( str_contains( $path, '..' ) ) {
	http_response_code( 400 );
	return true;
}
if ( ! file_exists( $root . $path ) && preg_match( '#^/[^/]+(/wp-(?:admin|includes|content)/.*|/wp-[a-z-]+\.php)$#', $path, $site_path ) ) {
	$path = $site_path[1];
}
$file = $root . $path;
if ( is_dir( $file ) ) {
	$file = rtrim( $file, '/' ) . '/index.php';
}
if ( ! is_file( $file ) ) {
	$file = $root . '/index.php';  // WordPress's front controller: posts, pages, archives, feeds
} elseif ( ! str_ends_with( $file, '.php' ) ) {
	return false;  // a static file, as it is
}
$_SERVER['SCRIPT_FILENAME'] = $file;
$_SERVER['SCRIPT_NAME']     = substr( $file, strlen( $root ) );
$_SERVER['PHP_SELF']        = $_SERVER['SCRIPT_NAME'];
chdir( dirname( $file ) );
require $file;
