<?php
// Run by scripts/refresh_kses_rules.py with `wp eval-file` on the sandbox: what WordPress's kses lets
// through in post content, read from WordPress itself (the filters hand over their lists).
$rules = array(
	'wordpress'  => get_bloginfo( 'version' ),
	'tags'       => wp_kses_allowed_html( 'post' ),
	'protocols'  => wp_allowed_protocols(),
	'uri_attributes' => wp_kses_uri_attributes(),
);
$safe_css = array();
add_filter(
	'safe_style_css',
	function ( $list ) use ( &$safe_css ) {
		$safe_css = $list;
		return $list;
	}
);
safecss_filter_attr( 'color:red' );
$rules['safe_css'] = array_values( array_unique( $safe_css ) );
// Which properties take url() and which gradients: asked of safecss_filter_attr() itself.
$rules['css_url_properties']      = array();
$rules['css_gradient_properties'] = array();
foreach ( $rules['safe_css'] as $property ) {
	if ( '--*' === $property ) {
		continue;
	}
	if ( '' !== safecss_filter_attr( "$property:url(https://example.com/a.png)" ) ) {
		$rules['css_url_properties'][] = $property;
	}
	if ( '' !== safecss_filter_attr( "$property:linear-gradient(red,blue)" ) ) {
		$rules['css_gradient_properties'][] = $property;
	}
}
echo wp_json_encode( $rules );
