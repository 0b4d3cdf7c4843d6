"""Media for WordPress: fetched by the agent itself, safely (no server-side fetches of URLs)."""
