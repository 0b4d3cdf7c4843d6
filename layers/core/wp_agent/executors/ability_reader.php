<?php
/**
 * wp-agent's answer to `wp ability list|get|exists` and `wp ability category list|get|exists` where
 * the site's WP-CLI has no ability command (no stable release up to 2.12 bundles it).
 *
 * Run as `wp eval-file <this file> <request>`, the request being JSON: {"words": [...], "options": {...}}
 * (the command's words after `ability`, its own options; WP-CLI's global ones such as --url and --user
 * are given to WP-CLI itself). It reads the Abilities API's registry (WordPress 6.9+) and prints what it
 * holds with WP-CLI's own formatter. It never executes an ability, checks its permission or calls any of
 * its callbacks: what an ability does is not read here, only what it says it is.
 */

$wp_agent_request = json_decode( isset( $args[0] ) ? (string) $args[0] : '', true );
if ( ! is_array( $wp_agent_request ) || ! isset( $wp_agent_request['words'] ) || ! is_array( $wp_agent_request['words'] ) ) {
	WP_CLI::error( 'wp-agent ability reader: the request could not be read.' );
}
if ( ! function_exists( 'wp_get_abilities' ) ) {
	WP_CLI::error( 'Requires WordPress 6.9 or greater.' );
}

$wp_agent_words   = array_values( array_map( 'strval', $wp_agent_request['words'] ) );
$wp_agent_options = isset( $wp_agent_request['options'] ) && is_array( $wp_agent_request['options'] ) ? $wp_agent_request['options'] : array();

/** An annotation as one word: 1, 0, or empty where the ability does not say. */
$wp_agent_hint = static function ( WP_Ability $ability, string $name ): string {
	$annotations = $ability->get_meta_item( 'annotations', array() );
	if ( ! is_array( $annotations ) || ! isset( $annotations[ $name ] ) || ! is_bool( $annotations[ $name ] ) ) {
		return '';
	}
	return $annotations[ $name ] ? '1' : '0';
};

$wp_agent_ability_row = static function ( WP_Ability $ability, bool $schemas ) use ( $wp_agent_hint ): array {
	$row = array(
		'name'        => $ability->get_name(),
		'label'       => $ability->get_label(),
		'category'    => $ability->get_category(),
		'description' => $ability->get_description(),
	);
	if ( $schemas ) {
		$row['input_schema']  = (string) wp_json_encode( $ability->get_input_schema() );
		$row['output_schema'] = (string) wp_json_encode( $ability->get_output_schema() );
	}
	$row['readonly']     = $wp_agent_hint( $ability, 'readonly' );
	$row['destructive']  = $wp_agent_hint( $ability, 'destructive' );
	$row['idempotent']   = $wp_agent_hint( $ability, 'idempotent' );
	$row['show_in_rest'] = $ability->get_meta_item( 'show_in_rest', false ) ? '1' : '0';
	return $row;
};

$wp_agent_category_row = static function ( WP_Ability_Category $category, bool $meta ): array {
	$row = array(
		'slug'        => $category->get_slug(),
		'label'       => $category->get_label(),
		'description' => $category->get_description(),
	);
	if ( $meta ) {
		$row['meta'] = (string) wp_json_encode( $category->get_meta() );
	}
	return $row;
};

$wp_agent_show = static function ( array $items, array $options, array $default_fields, bool $one ): void {
	$formatter = new WP_CLI\Formatter( $options, $default_fields );
	if ( $one ) {
		$formatter->display_item( $items[0] );
	} else {
		$formatter->display_items( $items );
	}
};

$wp_agent_subject = isset( $wp_agent_words[1] ) ? $wp_agent_words[1] : '';
if ( 'category' === ( $wp_agent_words[0] ?? '' ) ) {
	$wp_agent_verb = $wp_agent_subject;
	$wp_agent_slug = isset( $wp_agent_words[2] ) ? $wp_agent_words[2] : '';
	if ( 'list' === $wp_agent_verb ) {
		$rows = array_map(
			static function ( $category ) use ( $wp_agent_category_row ) {
				return $wp_agent_category_row( $category, false );
			},
			array_values( wp_get_ability_categories() )
		);
		$wp_agent_show( $rows, $wp_agent_options, array( 'slug', 'label', 'description' ), false );
		return;
	}
	if ( 'exists' === $wp_agent_verb ) {
		WP_CLI::halt( wp_has_ability_category( $wp_agent_slug ) ? 0 : 1 );
	}
	if ( 'get' === $wp_agent_verb ) {
		$category = wp_get_ability_category( $wp_agent_slug );
		if ( null === $category ) {
			WP_CLI::error( "Ability category {$wp_agent_slug} not found." );
		}
		$wp_agent_show( array( $wp_agent_category_row( $category, true ) ), $wp_agent_options, array( 'slug', 'label', 'description', 'meta' ), true );
		return;
	}
	WP_CLI::error( 'wp-agent ability reader: only list, get and exists are read.' );
}

$wp_agent_verb = isset( $wp_agent_words[0] ) ? $wp_agent_words[0] : '';
if ( 'list' === $wp_agent_verb ) {
	$filters = array();
	foreach ( array( 'category', 'namespace' ) as $filter ) {
		if ( isset( $wp_agent_options[ $filter ] ) && is_string( $wp_agent_options[ $filter ] ) ) {
			$filters[ $filter ] = $wp_agent_options[ $filter ];
		}
	}
	$in_rest = null;
	if ( isset( $wp_agent_options['show-in-rest'] ) ) {
		$in_rest = filter_var( $wp_agent_options['show-in-rest'], FILTER_VALIDATE_BOOLEAN, FILTER_NULL_ON_FAILURE );
	}
	unset( $wp_agent_options['category'], $wp_agent_options['namespace'], $wp_agent_options['show-in-rest'] );
	$rows = array();
	foreach ( wp_get_abilities( $filters ) as $ability ) {
		$row = $wp_agent_ability_row( $ability, false );
		if ( null === $in_rest || ( '1' === $row['show_in_rest'] ) === $in_rest ) {
			$rows[] = $row;
		}
	}
	$format = isset( $wp_agent_options['format'] ) ? $wp_agent_options['format'] : 'table';
	if ( 'ids' === $format ) {
		echo implode( ' ', array_column( $rows, 'name' ) ), "\n";
		return;
	}
	$wp_agent_show( $rows, $wp_agent_options, array( 'name', 'label', 'category', 'description' ), false );
	return;
}
if ( 'exists' === $wp_agent_verb ) {
	WP_CLI::halt( wp_has_ability( $wp_agent_subject ) ? 0 : 1 );
}
if ( 'get' === $wp_agent_verb ) {
	$ability = wp_get_ability( $wp_agent_subject );
	if ( null === $ability ) {
		WP_CLI::error( "Ability {$wp_agent_subject} not found." );
	}
	$row = $wp_agent_ability_row( $ability, true );
	$wp_agent_show( array( $row ), $wp_agent_options, array_keys( $row ), true );
	return;
}
WP_CLI::error( 'wp-agent ability reader: only list, get and exists are read.' );
