"""A click group whose commands are imported when they run (click's "Lazily Loading Subcommands"
pattern): ``rngcert certify`` loads the certify command's module and what it uses, not the store,
the controller recorder or the shuffle commands. ``rngcert --help`` imports every command's module
to print its one-line help (the help is the command's own, never a copy)."""

from __future__ import annotations

import importlib
from typing import Mapping

import click

from rngcert.cli._common import Group


class LazyGroup(Group):
    """:class:`rngcert.cli._common.Group` with commands given as ``{name: "module:attribute"}``.

    Parameters
    ----------
    lazy_commands : mapping of str to str
        Each command's name and where it is defined (``"rngcert.cli.certify:certify"``); the
        module is imported the first time the command is looked up (to run it, or for the help).
    *args, **kwargs
        Those of :class:`click.Group`.
    """

    def __init__(self, *args, lazy_commands: Mapping[str, str] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy_commands = dict(lazy_commands or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self.lazy_commands))

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The group's list of commands; a command whose module cannot be imported (a missing dependency)
        is listed with the reason instead of ending the whole help in a traceback (running it is an
        internal error, exit 1, as before)."""
        self._unloadable = {}
        for name in self.lazy_commands:
            try:
                self.get_command(ctx, name)
            except Exception as exc:  # listed with the reason; the other commands' help still shows
                self._unloadable[name] = click.Command(name, short_help=f"(cannot be loaded: {type(exc).__name__}: {exc})")
        try:
            super().format_commands(ctx, formatter)
        finally:
            self._unloadable = {}

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in getattr(self, "_unloadable", {}):
            return self._unloadable[cmd_name]
        if cmd_name in self.lazy_commands and cmd_name not in self.commands:
            self.add_command(self._load(cmd_name), cmd_name)
        return super().get_command(ctx, cmd_name)

    def _load(self, name: str) -> click.Command:
        module, attr = self.lazy_commands[name].split(":")
        cmd = getattr(importlib.import_module(module), attr)
        if not isinstance(cmd, click.Command) or cmd.name != name:  # a wrong table entry is a bug, said at once
            raise TypeError(f"{self.lazy_commands[name]} is not the click command {name!r}")
        return cmd
