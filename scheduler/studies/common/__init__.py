"""What several studies share: config catalogue and parsing helpers, Markdown tables,
statistics helpers and the figure theme. Public names only."""
