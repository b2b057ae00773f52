"""The typer CLI: thin commands that parse options, call one module function, print a report."""
