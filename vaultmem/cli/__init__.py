"""The command line: the console entry and the typer app's command modules."""
