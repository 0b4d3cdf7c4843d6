"""The WP-CLI command line as words: shell syntax, parsed options and positionals, WP-CLI's aliases."""
