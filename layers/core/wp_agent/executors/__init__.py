"""Where WP-CLI runs: the WpCli port and its adapters (local subprocess, SSH, the sandbox WordPress)."""
