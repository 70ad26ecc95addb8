"""Where a workdir's graph and vectors live, and the errors for asking elsewhere: a workdir
built on a server is never silently rebuilt locally (nor the reverse), and an unreachable server
is one line naming the server and the URL."""

from __future__ import annotations


class StoreMismatch(ValueError):
    """The workdir's graph or vectors live elsewhere than where they were asked for. The message
    names the Python keyword (``str``) or, rendered with ``cli=True``, the command-line flag."""

    def __init__(self, template: str, **options: str | None) -> None:
        self.template, self.options = template, options
        super().__init__(self.render(cli=False))

    def render(self, *, cli: bool) -> str:
        text = self.template
        for keyword, value in self.options.items():
            if cli:
                flag = "--" + keyword.replace("_", "-")
                option = f"{flag} {value}" if value else flag
            else:
                option = f"{keyword}={value!r}" if value else keyword
            text = text.replace("{" + keyword + "}", option)
        return text


class StoreUnreachable(ConnectionError):
    """A server the workdir needs did not answer: one line, which server, which URL, what to check."""

    def __init__(self, server: str, url: str, cause: BaseException) -> None:
        reason = " ".join(str(cause).split())[:160] or type(cause).__name__
        super().__init__(f"cannot reach the {server} server at {url} ({reason}); "
                         f"check that it is running and that the URL's host and port are right")
