<?php
/**
 * Seeds the sandbox: runs a list of real WP-CLI commands inside this one WP-CLI process.
 *
 *     php wp-cli.phar --path=<site> eval-file provision.php <plan.json>
 *
 * Provisioning only (the agent's policy never allows eval-file). Each step is
 * {"blog": <id>, "argv": [...], "launch": bool} and goes through WP-CLI's own command code exactly
 * as `wp --url=<site of blog> <argv>` would, without a new process per command (~100 commands in
 * a few seconds instead of a minute). Commands that end their process when done (WP-CLI's
 * update/delete of posts, users, comments call exit()) are launched as their own process with the
 * plan's "wp" command line. "{{last}}" in an argument is the trimmed output of the previous step
 * (a --porcelain ID). Before the steps, "files" are written: sample media made with
 * GD (images) or given as text (PDF), for `media import` to import like any upload.
 * The first failing step stops everything with its error and exit code 1.
 */

use WP_CLI\Loggers\Execution;

$plan = json_decode( file_get_contents( $args[0] ), true );
if ( ! is_array( $plan ) ) {
	WP_CLI::error( 'provision: the plan is not JSON' );
}

foreach ( $plan['files'] as $file ) {
	if ( isset( $file['text'] ) ) {
		file_put_contents( $file['path'], $file['text'] );
		continue;
	}
	$image = imagecreatetruecolor( $file['width'], $file['height'] );
	list( $red, $green, $blue ) = $file['rgb'];
	imagefill( $image, 0, 0, imagecolorallocate( $image, $red, $green, $blue ) );
	imagefilledrectangle( $image, 0, (int) ( $file['height'] * 0.8 ), $file['width'], $file['height'], imagecolorallocate( $image, 255, 255, 255 ) );
	'png' === $file['format'] ? imagepng( $image, $file['path'] ) : imagejpeg( $image, $file['path'], 85 );
	imagedestroy( $image );
}

$real_logger = null;
$capture     = null;
// WP_CLI::error() exits; the captured error would be lost with the process, so print it on the way out.
register_shutdown_function(
	static function () use ( &$capture ) {
		if ( $capture instanceof Execution && '' !== $capture->stderr ) {
			fwrite( STDERR, $capture->stderr );
		}
	}
);

$last = '';
foreach ( $plan['steps'] as $number => $step ) {
	$argv = array_map(
		static function ( $word ) use ( $last ) {
			return str_replace( '{{last}}', $last, $word );
		},
		$step['argv']
	);
	fwrite( STDERR, sprintf( "provision: step %d (blog %d): %s\n", $number + 1, $step['blog'], implode( ' ', array_slice( $argv, 0, 4 ) ) ) );
	if ( ! empty( $step['launch'] ) ) {
		$last = trim( provision_launch( array_merge( $plan['wp'], $argv, array( '--url=' . get_home_url( $step['blog'], '/' ) ) ) ) );
		wp_cache_flush(); // the other process changed the database behind this one's object cache
		continue;
	}
	if ( is_multisite() ) {
		switch_to_blog( $step['blog'] );
	}
	list( $positional, $assoc ) = WP_CLI::get_configurator()->parse_args( $argv );
	$capture = new Execution();
	$real_logger = WP_CLI::get_logger();
	WP_CLI::set_logger( $capture );
	$capture->ob_start();
	WP_CLI::get_runner()->run_command( $positional, $assoc, array( 'back_compat_conversions' => true ) );
	$capture->ob_end();
	WP_CLI::set_logger( $real_logger );
	$last    = trim( $capture->stdout );
	$capture = null;
	if ( is_multisite() ) {
		restore_current_blog();
	}
}
WP_CLI::success( sprintf( 'provisioned %d steps', count( $plan['steps'] ) ) );

/**
 * Runs one command in its own process (no shell: an argv array); stops provisioning if it fails.
 */
function provision_launch( array $command ) {
	$process = proc_open( $command, array( 1 => array( 'pipe', 'w' ), 2 => array( 'pipe', 'w' ) ), $pipes );
	$stdout  = stream_get_contents( $pipes[1] );
	$stderr  = stream_get_contents( $pipes[2] );
	fclose( $pipes[1] );
	fclose( $pipes[2] );
	if ( 0 !== proc_close( $process ) ) {
		fwrite( STDERR, $stderr );
		exit( 1 );
	}
	return $stdout;
}
