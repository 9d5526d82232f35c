"""Command handlers: each turns parsed arguments into output and an exit code.

``runner.cli`` parses ``tourney`` arguments and imports the handler lazily;
the work itself belongs to the modules that own the concept.
"""
