"""Tests for reading an issue's mentions and resolving them to a snapshot (explore/mentions.py).

Every trace below is written for these tests in the real format of its language; the shop project is made up.
"""

from __future__ import annotations

import pytest

from swe_explore.chunking.types import Chunk
from swe_explore.explore.mention_resolution import FEATURE_NAMES, FEATURE_STRENGTH, MentionIndex, resolve_mentions
from swe_explore.explore.mentions import IssueMentions, Mention, extract_mentions, name_parts


def _frames(text: str) -> list[tuple[str, int | None, str]]:
    return [f.location for f in extract_mentions(text).frames]


def _errors(text: str) -> list[str]:
    return [e.text for e in extract_mentions(text).errors]


# -- frames, one test per trace format ---------------------------------------------------------------------

PYTHON_TRACE = (
    "Saving fails:\r\n\r\n```\r\nTraceback (most recent call last):\r\n"
    '  File "/home/u/proj/src/shop/cli.py", line 12, in main\r\n'
    "    run(args)\r\n"
    '  File "/usr/lib/python3.11/site-packages/shop/cart.py", line 88, in total\r\n'
    "    return sum(item.price for item in self.items)\r\n"
    '  File "<stdin>", line 1, in <module>\r\n'
    "ValueError: bad thing\r\n```\r\n"
)


def test_python_traceback_with_crlf() -> None:
    """Python frames keep absolute paths as written; the <stdin> pseudo-file gives no frame; CRLF is read."""
    mentions = extract_mentions(PYTHON_TRACE)
    assert [f.location for f in mentions.frames] == [
        ("/home/u/proj/src/shop/cli.py", 12, "main"),
        ("/usr/lib/python3.11/site-packages/shop/cart.py", 88, "total"),
    ]
    assert {f.format for f in mentions.frames} == {"python"}
    assert [(e.type, e.message, e.sources) for e in mentions.errors] == [("ValueError", "bad thing", ("trace",))]


def test_ipython_pytest_and_warning_locations() -> None:
    """IPython 8 `File path:line, in f`, IPython 7 `path in f(...)` + `---> N`, pytest and warning lines."""
    text = """```
File ~/envs/x/lib/python3.10/site-packages/shop/cart.py:88, in Cart.total(self)
~/envs/x/lib/python3.10/site-packages/shop/tax.py in compute_tax(cart, rate)
     10     base = cart.total()
---> 11     return base * rate
tests/test_cart.py:31: in test_total
/srv/app/shop/config.py:7: DeprecationWarning: rate is deprecated
```"""
    assert _frames(text) == [
        ("~/envs/x/lib/python3.10/site-packages/shop/cart.py", 88, "Cart.total"),
        ("~/envs/x/lib/python3.10/site-packages/shop/tax.py", 11, "compute_tax"),
        ("tests/test_cart.py", 31, "test_total"),
        ("/srv/app/shop/config.py", 7, ""),
    ]
    assert _errors(text) == ["DeprecationWarning: rate is deprecated"]


GO_PANIC = """```
panic: runtime error: invalid memory address or nil pointer dereference
[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a1b2c]

goroutine 1 [running]:
github.com/acme/shop/cart.(*Cart).Total(0x0, {0xc000012345, 0x3})
\t/home/dev/go/src/github.com/acme/shop/cart/cart.go:42 +0x1d
main.main()
\t/home/dev/go/src/github.com/acme/shop/main.go:17 +0x25
exit status 2
```
go vet says

    ./cart/cart.go:30:2: unreachable code
"""


def test_go_panic_and_vet_line() -> None:
    """A Go frame is the function line plus its tab-indented `path:line +0x..` line; vet lines have no function."""
    mentions = extract_mentions(GO_PANIC)
    assert [f.location for f in mentions.frames] == [
        ("/home/dev/go/src/github.com/acme/shop/cart/cart.go", 42, "github.com/acme/shop/cart.(*Cart).Total"),
        ("/home/dev/go/src/github.com/acme/shop/main.go", 17, "main.main"),
        ("cart/cart.go", 30, ""),
    ]
    assert [f.format for f in mentions.frames] == ["go", "go", "diagnostic"]
    assert [(e.text, e.source) for e in mentions.errors] == [
        ("panic: runtime error: invalid memory address or nil pointer dereference", "trace")
    ]
    assert mentions.identifiers == ()  # function lines are frames, not identifiers


RUST_PANIC = """```
thread 'main' panicked at src/parser.rs:120:9:
called `Option::unwrap()` on a `None` value
stack backtrace:
   0: rust_begin_unwind
             at /rustc/90c541806f23a127002de5b4038be731ba1458ca/library/std/src/panicking.rs:578:5
   1: core::panicking::panic_fmt
   2: shop::parser::Parser::parse_expr
             at ./src/parser.rs:120:9
```
Old toolchains print `thread 'main' panicked at 'index out of bounds', src/lib.rs:7:3` instead.

```
error[E0308]: mismatched types
  --> src/cart.rs:14:20
```
"""


def test_rust_panic_backtrace_and_compiler_error() -> None:
    """Backtrace headers take the `at` line below them; a header without one is a frame without a path."""
    mentions = extract_mentions(RUST_PANIC)
    assert [f.location for f in mentions.frames] == [
        ("src/parser.rs", 120, ""),
        ("/rustc/90c541806f23a127002de5b4038be731ba1458ca/library/std/src/panicking.rs", 578, "rust_begin_unwind"),
        ("", None, "core::panicking::panic_fmt"),
        ("src/parser.rs", 120, "shop::parser::Parser::parse_expr"),
        ("src/lib.rs", 7, ""),
        ("src/cart.rs", 14, ""),
    ]
    assert [e.text for e in mentions.errors] == [
        "panic: called `Option::unwrap()` on a `None` value",
        "panic: index out of bounds",
        "error[E0308]: mismatched types",
    ]


JAVA_TRACE = """```
Exception in thread "main" java.lang.IllegalStateException: cart is empty
\tat com.acme.shop.Cart.total(Cart.java:42)
\tat com.acme.shop.Cart$Line.price(Cart.java:88)
\tat java.base/java.lang.Thread.run(Thread.java:833)
\tat jdk.internal.reflect.NativeMethodAccessorImpl.invoke0(Native Method)
Caused by: java.lang.NullPointerException
\tat com.acme.shop.Main.main(Main.java:7)
\t... 3 more
```"""


def test_java_stack_trace_paths_are_package_paths() -> None:
    """`at pkg.Class.method(Class.java:12)` gives `pkg/Class.java`; a native frame has no path or line."""
    mentions = extract_mentions(JAVA_TRACE)
    assert [f.location for f in mentions.frames] == [
        ("com/acme/shop/Cart.java", 42, "com.acme.shop.Cart.total"),
        ("com/acme/shop/Cart.java", 88, "com.acme.shop.Cart$Line.price"),
        ("java/lang/Thread.java", 833, "java.base/java.lang.Thread.run"),
        ("", None, "jdk.internal.reflect.NativeMethodAccessorImpl.invoke0"),
        ("com/acme/shop/Main.java", 7, "com.acme.shop.Main.main"),
    ]
    assert [e.text for e in mentions.errors] == [
        "java.lang.IllegalStateException: cart is empty",
        "java.lang.NullPointerException",
    ]


def test_javascript_and_typescript_stack_lines() -> None:
    """V8 lines with and without a function, `new`, `async`, file:// URLs, and a Firefox `f@url:line:col`."""
    text = """```
TypeError: Cannot read properties of undefined (reading 'price')
    at Cart.total (/home/u/shop/src/cart.ts:12:5)
    at new Checkout (C:\\shop\\src\\checkout.js:30:11)
    at /home/u/shop/src/index.js:1:2
    at Object.<anonymous> (file:///home/u/shop/bin/run.mjs:3:9)
    at async Promise.all (index 0)
```
Firefox: `total@http://localhost:8080/src/cart.js:12:5`"""
    assert _frames(text) == [
        ("/home/u/shop/src/cart.ts", 12, "Cart.total"),
        ("C:/shop/src/checkout.js", 30, "Checkout"),
        ("/home/u/shop/src/index.js", 1, ""),
        ("/home/u/shop/bin/run.mjs", 3, "Object.<anonymous>"),
    ]
    assert _errors(text) == ["TypeError: Cannot read properties of undefined (reading 'price')"]


def test_firefox_frame_on_its_own_line() -> None:
    """Firefox/Safari frames are `function@url:line:column`; the URL's scheme and host are dropped."""
    assert _frames("total@http://localhost:8080/src/cart.js:12:5\n@debugger eval code:1:1") == [
        ("/src/cart.js", 12, "total")
    ]


def test_php_errors_and_stack_frames() -> None:
    """PHP `in X.php:12` / `on line 12` and `#0 X.php(40): A\\B->f()`; internal frames are skipped."""
    text = """```
PHP Fatal error:  Uncaught TypeError: Cart::total(): Argument #1 ($discount) must be of type int in /var/www/src/Cart.php:12
Stack trace:
#0 /var/www/src/Checkout.php(40): App\\Shop\\Cart->total('10')
#1 [internal function]: App\\Shop\\Checkout::run()
#2 {main}
  thrown in /var/www/src/Cart.php on line 12
PHP Warning:  Undefined variable $x in /var/www/lib/helpers.php on line 7
```"""
    assert _frames(text) == [
        ("/var/www/src/Cart.php", 12, ""),
        ("/var/www/src/Checkout.php", 40, "App\\Shop\\Cart->total"),
        ("/var/www/lib/helpers.php", 7, ""),
    ]
    assert _errors(text) == [
        "TypeError: Cart::total(): Argument #1 ($discount) must be of type int",
        "Warning: Undefined variable $x",
    ]


def test_ruby_backtrace_both_quote_styles() -> None:
    """Ruby frames with the backtick form and the Ruby 3.4 quote form, `from` lines, and the error in parentheses."""
    text = """```
/app/lib/shop/cart.rb:12:in `total': undefined method `price' for nil (NoMethodError)
\tfrom /app/lib/shop/checkout.rb:30:in 'Shop::Checkout#run'
\tfrom lib/shop.rb:3:in `block in <main>'
```"""
    assert _frames(text) == [
        ("/app/lib/shop/cart.rb", 12, "total"),
        ("/app/lib/shop/checkout.rb", 30, "Shop::Checkout#run"),
        ("lib/shop.rb", 3, "block in <main>"),
    ]
    assert _errors(text) == ["NoMethodError: undefined method `price' for nil"]


def test_sanitizer_gdb_and_compiler_frames() -> None:
    """ASan frames with and without a column, gdb frames (`at` on the same or the next line), shared-library
    frames skipped, and a compiler diagnostic."""
    text = """```
==4242==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000014
    #0 0x4f2d in cart_total /src/shop/cart.c:12:5
    #1 0x4f99 in shop::Cart::total(int) const src/shop/cart.cpp:40
    #2 0x7f12 in __libc_start_main (/lib/x86_64-linux-gnu/libc.so.6+0x2409a)
```
```
#0  cart_total (c=0x0) at src/cart.c:12
#1  0x000055555555513d in shop::Checkout::run (this=0x7ffe, items=...)
    at src/checkout.cpp:40
#2  0x00007ffff7a2d in __libc_start_main () from /lib/x86_64-linux-gnu/libc.so.6
```
```
src/cart.c:14:5: error: expected ';' before 'return'
```"""
    mentions = extract_mentions(text)
    assert [f.location for f in mentions.frames] == [
        ("/src/shop/cart.c", 12, "cart_total"),
        ("src/shop/cart.cpp", 40, "shop::Cart::total(int) const"),
        ("src/cart.c", 12, "cart_total"),
        ("src/checkout.cpp", 40, "shop::Checkout::run"),
        ("src/cart.c", 14, ""),
    ]
    assert [f.format for f in mentions.frames] == ["sanitizer", "sanitizer", "gdb", "gdb", "diagnostic"]
    assert [e.text for e in mentions.errors] == [
        "AddressSanitizer: heap-buffer-overflow on address 0x602000000014",
        "error: expected ';' before 'return'",
    ]


def test_repeated_trace_is_read_once_and_quoted_lines_count() -> None:
    """A traceback pasted twice (once as a markdown quote) gives each frame once."""
    quoted = "\n".join("> " + line for line in PYTHON_TRACE.replace("\r\n", "\n").splitlines())
    mentions = extract_mentions(PYTHON_TRACE + "\nsame again:\n" + quoted)
    assert [f.location for f in mentions.frames] == [
        ("/home/u/proj/src/shop/cli.py", 12, "main"),
        ("/usr/lib/python3.11/site-packages/shop/cart.py", 88, "total"),
    ]
    assert [(e.text, e.count) for e in mentions.errors] == [("ValueError: bad thing", 2)]


def test_prose_numbers_are_not_frames() -> None:
    """Numbered lists, times and versions never read as frames."""
    text = "Steps:\n1: install it\n2: run `shop --total`\nAt 10:30:45 on Python 3.10.0b2:317314165a it broke."
    assert extract_mentions(text).frames == ()


# -- errors ------------------------------------------------------------------------------------------------


def test_error_messages_of_several_kinds() -> None:
    """Lower-case Python exception after a traceback, argparse-style `prog: error:`, inline errors in backticks."""
    text = """```
Traceback (most recent call last):
  File "shop/cli.py", line 3, in <module>
    main()
re.error: missing ), unterminated subpattern at position 0
```
```
usage: shop [options]
shop: error: argument --total/-t: expected one argument
```
It would be helpful if a `ValueError` was raised, e.g. `ValueError: empty name`."""
    mentions = extract_mentions(text)
    assert [(e.type, e.message, e.source) for e in mentions.errors] == [
        ("re.error", "missing ), unterminated subpattern at position 0", "trace"),
        ("error", "argument --total/-t: expected one argument", "code_block"),
        ("ValueError", "empty name", "backtick"),
    ]


# -- identifiers and paths ---------------------------------------------------------------------------------

ISSUE = """`Cart.total()` ignores the discount when the CartItem has a coupon_code set

When I call `apply_discount` on a cart (see src/shop/cart.py:42 and lib/shop/cart.rb) the
`shop.pricing.PriceList.lookup` result is stale. The `std::vec::Vec` path and `Foo::bar` are fine,
and in PHP `$this->render()` works. This is a _very annoying_ bug, e.g. on the checkout page of example.com.
Also see https://github.com/acme/shop/blob/main/src/shop/tax.py#L17 and Checkout.java.

```python
from shop import Cart
cart = Cart(items=[])
cart.add_item(sku="A1", qty=2)
print(cart.total(), compute_tax(cart))
```
The Blueprint class and the registry are involved; Cart.total() again.
"""


def test_identifiers_in_order_with_sources() -> None:
    """Backticks keep every name; code keeps chains, calls and shaped names; prose keeps chains, calls, shaped
    and mid-sentence capitalised names; English words, emphasis, domains and short names are dropped."""
    mentions = extract_mentions(ISSUE)
    assert [(m.text, m.sources, m.count) for m in mentions.identifiers] == [
        ("Cart.total", ("backtick", "prose"), 2),
        ("CartItem", ("prose",), 1),
        ("coupon_code", ("prose",), 1),
        ("apply_discount", ("backtick",), 1),
        ("shop.pricing.PriceList.lookup", ("backtick",), 1),
        ("std::vec::Vec", ("backtick",), 1),
        ("Foo::bar", ("backtick",), 1),
        ("render", ("backtick",), 1),
        ("Cart", ("code_block",), 1),
        ("cart.add_item", ("code_block",), 1),
        ("cart.total", ("code_block",), 1),
        ("compute_tax", ("code_block",), 1),
        ("Blueprint", ("prose",), 1),
    ]


def test_paths_with_line_suffixes_and_github_links() -> None:
    """Repo paths with a known extension, `:42` and GitHub `#L17` line suffixes; other URLs are ignored."""
    mentions = extract_mentions(ISSUE)
    assert [(m.text, m.line, m.source) for m in mentions.paths] == [
        ("src/shop/cart.py", 42, "prose"),
        ("lib/shop/cart.rb", None, "prose"),
        ("src/shop/tax.py", 17, "prose"),
        ("Checkout.java", None, "prose"),
    ]


def test_prose_headings_emphasis_and_capitalised_names() -> None:
    """Title-case headings and emphasised words are not names; a capitalised word after a lower-case or
    function word is; dunder names survive emphasis unwrapping; a bare `Error:` line is an error."""
    text = (
        "### System Information\n_No response_\n"
        "The __init__ of the Blueprint calls Session.send (see the Python docs), **not Cart**.\n"
        "Error: Cannot find module './cart'"
    )
    mentions = extract_mentions(text)
    assert [m.text for m in mentions.identifiers] == ["__init__", "Blueprint", "Session.send", "Cart"]
    assert [e.text for e in mentions.errors] == ["Error: Cannot find module './cart'"]


def test_stop_words_and_short_names_are_dropped() -> None:
    """Keywords, builtins, placeholders, English words and names under three characters never count."""
    text = "```\nimport os\nfor x in range(3):\n    print(len(data), foo(x), xr.merge, io.open)\n```\n`if` `the` `id`"
    assert [m.text for m in extract_mentions(text).identifiers] == ["xr.merge"]


def test_mentions_of_an_empty_text() -> None:
    """No text, no mentions."""
    assert extract_mentions("").is_empty and extract_mentions("\r\n  \n").is_empty


@pytest.mark.parametrize(
    ("name", "parts"),
    [
        ("pkg.Foo.bar", ("pkg", "Foo", "bar")),
        ("ns::Bar::baz(int) const", ("ns", "Bar", "baz")),
        ("main.(*Server).handle", ("main", "Server", "handle")),
        ("example.com/shop/cart.(*Cart[T]).Total", ("example", "com", "shop", "cart", "Cart", "Total")),
        ("App\\Shop\\Cart->total", ("App", "Shop", "Cart", "total")),
        ("Shop::Checkout#run", ("Shop", "Checkout", "run")),
        ("com.acme.Cart$Line.price", ("com", "acme", "Cart", "Line", "price")),
        ("<T as core::fmt::Debug>::fmt", ("fmt",)),
        ("std::vector<int, std::allocator<int> >::push_back(int const&)", ("std", "vector", "push_back")),
        ("block in run", ("run",)),
        ("<module>", ()),
        ("{{closure}}", ()),
    ],
)
def test_name_parts(name: str, parts: tuple[str, ...]) -> None:
    """Qualified names of every language split into identifier components."""
    assert name_parts(name) == parts


# -- resolution --------------------------------------------------------------------------------------------

FILES = [
    "README.md",
    "lib/shop/cart.rb",
    "src/main/java/com/acme/shop/Cart.java",
    "src/shop/__init__.py",
    "src/shop/cart.py",
    "src/shop/decoder.py",
    "src/shop/tax.py",
    "tests/test_cart.py",
]
CHUNKS = [
    Chunk("src/shop/cart.py", 1, 5, "gap", "", "python"),  # 0
    Chunk("src/shop/cart.py", 7, 9, "header", "Cart", "python"),  # 1
    Chunk("src/shop/cart.py", 11, 20, "method", "Cart.total", "python"),  # 2
    Chunk("src/shop/cart.py", 22, 30, "method", "Cart.add_item", "python"),  # 3
    Chunk("src/shop/cart.py", 31, 31, "gap", "Cart", "python"),  # 4: a class's gap is not a definition
    Chunk("src/shop/tax.py", 1, 12, "function", "compute_tax", "python"),  # 5
    Chunk("src/shop/tax.py", 14, 20, "function", "total, subtotal", "python"),  # 6: merged chunk
    Chunk("src/shop/decoder.py", 1, 9, "function", "decode", "python"),  # 7
    Chunk("tests/test_cart.py", 1, 10, "function", "test_total", "python"),  # 8
    Chunk("src/main/java/com/acme/shop/Cart.java", 1, 3, "gap", "", "java"),  # 9
    Chunk("src/main/java/com/acme/shop/Cart.java", 5, 50, "method", "Cart.total", "java"),  # 10
    Chunk("lib/shop/cart.rb", 1, 20, "method", "Shop.Cart.checkout", "ruby"),  # 11
]


@pytest.fixture(scope="module")
def index() -> MentionIndex:
    """The index of the hand-built snapshot above."""
    return MentionIndex(FILES, CHUNKS)


@pytest.mark.parametrize(
    ("path", "files"),
    [
        ("src/shop/cart.py", ["src/shop/cart.py"]),  # exact
        ("/home/u/proj/src/shop/cart.py", ["src/shop/cart.py"]),  # foreign prefix
        ("C:\\work\\proj\\src\\shop\\tax.py", ["src/shop/tax.py"]),  # Windows
        ("file:///srv/proj/tests/test_cart.py", ["tests/test_cart.py"]),  # file URL
        ("/usr/lib/python3.11/site-packages/shop/tax.py", ["src/shop/tax.py"]),  # installed copy of src/shop
        ("/usr/lib/python3.11/json/decoder.py", []),  # stdlib: only the base name exists in the snapshot
        ("decoder.py", ["src/shop/decoder.py"]),  # a relative name matches as a suffix
        ("shop/cart.py", ["src/shop/cart.py"]),
        ("cart.rb", ["lib/shop/cart.rb"]),
        ("/app/README.md", ["README.md"]),  # a top-level file under a foreign prefix
        ("other/cart.py", []),  # a relative path with another directory
        ("com/acme/shop/Cart.java", ["src/main/java/com/acme/shop/Cart.java"]),  # Java package path
        ("missing.py", []),
    ],
)
def test_match_path_by_longest_valid_suffix(index: MentionIndex, path: str, files: list[str]) -> None:
    """Paths match by their longest path suffix in the snapshot, never by base name alone under a foreign
    directory."""
    assert index.match_path(path) == files


def test_match_path_keeps_ties() -> None:
    """A base name that two files share matches both."""
    index = MentionIndex(["a/util.py", "b/util.py", "b/c/util.py"], [])
    assert index.match_path("util.py") == ["a/util.py", "b/c/util.py", "b/util.py"]
    assert index.match_path("/x/b/util.py") == ["b/util.py"]


def test_match_module() -> None:
    """The longest module prefix of at least two components names a file; the rest is returned."""
    index = MentionIndex(FILES, CHUNKS)
    assert index.match_module(("shop", "tax", "compute_tax")) == (["src/shop/tax.py"], ("compute_tax",))
    assert index.match_module(("src", "shop", "cart", "Cart", "total")) == (["src/shop/cart.py"], ("Cart", "total"))
    assert index.match_module(("shop",)) == ([], ())
    assert index.match_module(("xr", "merge")) == ([], ())


def _nonzero(values: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 6) for k, v in values.items() if v}


def test_trace_frames_resolve_to_lines_functions_and_files(index: MentionIndex) -> None:
    """A frame's line selects its chunk, its function the file's definition of that name (even after line
    drift), its file the file; an unresolved third-party frame adds nothing."""
    text = """```
Traceback (most recent call last):
  File "/home/u/proj/src/shop/cli.py", line 3, in <module>
  File "/home/u/proj/src/shop/cart.py", line 15, in total
  File "/home/u/proj/src/shop/tax.py", line 40, in compute_tax
  File "/usr/lib/python3.11/site-packages/requests/api.py", line 59, in total
ValueError: bad thing
```"""
    resolved = index.resolve(extract_mentions(text))
    assert dict(resolved.counts) == {
        "frames": 4,
        "frames_resolved": 2,
        "paths": 0,
        "paths_resolved": 0,
        "identifiers": 1,
        "identifiers_resolved": 0,
        "too_ambiguous": 0,
    }
    assert resolved.chunks_hit() == [2, 5]
    assert _nonzero(resolved.chunk_features(2)) == {
        "frame_line": 1.0,
        "frame_function": 1.0,
        "frame_file": 1.0,
        "mention_score": 1.0,
    }
    # line 40 is past the end of tax.py's chunks (the report came from another version): the function still hits
    assert _nonzero(resolved.chunk_features(5)) == {"frame_function": 1.0, "frame_file": 1.0, "mention_score": 0.9}
    assert _nonzero(resolved.chunk_features(3)) == {"frame_file": 1.0, "mention_score": 0.8}  # same file only
    assert _nonzero(resolved.chunk_features(6)) == {"frame_file": 1.0, "mention_score": 0.8}
    assert _nonzero(resolved.file_features("src/shop/cart.py")) == {
        "frame_line": 1.0,
        "frame_function": 1.0,
        "frame_file": 1.0,
        "mention_score": 1.0,
    }
    assert resolved.files_hit() == ["src/shop/cart.py", "src/shop/tax.py"]
    assert resolved.file_features("src/shop/decoder.py") == dict.fromkeys(FEATURE_NAMES, 0.0)


def test_java_and_rust_frames(index: MentionIndex) -> None:
    """A Java frame resolves through its package path; a Rust frame without a path matches by qualified name,
    split over the two files defining `Cart.total`."""
    text = """```
\tat com.acme.shop.Cart.total(Cart.java:12)
stack backtrace:
   3: shop::cart::Cart::total
   4: shop::main
```"""
    resolved = index.resolve(extract_mentions(text))
    java = "src/main/java/com/acme/shop/Cart.java"
    assert _nonzero(resolved.file_features(java)) == {
        "frame_line": 1.0,
        "frame_function": 1.0,
        "frame_file": 1.0,
        "frame_symbol": 0.5,
        "mention_score": 1.0,
    }
    assert _nonzero(resolved.chunk_features(2)) == {"frame_symbol": 0.5, "mention_score": 0.5}
    assert [(h.feature, h.path, h.chunk, h.weight) for h in resolved.hits] == [
        ("frame_file", java, None, 1.0),
        ("frame_line", java, 10, 1.0),
        ("frame_function", java, 10, 1.0),
        ("frame_symbol", "src/shop/cart.py", 2, 0.5),
        ("frame_symbol", java, 10, 0.5),
    ]


def test_identifiers_resolve_qualified_bare_and_by_module(index: MentionIndex) -> None:
    """Qualified names hit definitions whose last two components agree, bare names those whose own name
    agrees, dotted module names their file; weights are split over the files hit."""
    mentions = IssueMentions(
        identifiers=(
            Mention("shop.cart.Cart.total", ("backtick",)),  # module shop/cart (.py and .rb) + Cart.total in cart.py
            Mention("Cart.total", ("backtick",)),  # qualified: cart.py and Cart.java
            Mention("subtotal", ("prose",)),  # bare, found in a merged chunk's second symbol
            Mention("ds.compute_tax", ("code_block",)),  # `ds.` is a variable: falls back to the bare name
            Mention("shop.tax", ("prose",)),  # module only
            Mention("Cart", ("prose",)),  # the class header, not the class's gap chunk
            Mention("Unknown", ("prose",)),
        )
    )
    resolved = index.resolve(mentions)
    assert _nonzero(resolved.chunk_features(2)) == {
        "module_file": 0.5,
        "identifier_qualified": 1.5,
        "mention_score": 0.55,
    }
    assert _nonzero(resolved.chunk_features(10)) == {"identifier_qualified": 0.5, "mention_score": 0.4}
    assert _nonzero(resolved.chunk_features(6)) == {"module_file": 1.0, "identifier_bare": 1.0, "mention_score": 0.55}
    assert _nonzero(resolved.chunk_features(5)) == {"module_file": 1.0, "identifier_bare": 1.0, "mention_score": 0.55}
    assert _nonzero(resolved.chunk_features(1)) == {"module_file": 0.5, "identifier_bare": 1.0, "mention_score": 0.55}
    assert _nonzero(resolved.chunk_features(4)) == {"module_file": 0.5, "mention_score": 0.55}
    assert _nonzero(resolved.file_features("src/shop/cart.py")) == {
        "module_file": 0.5,
        "identifier_qualified": 1.5,
        "identifier_bare": 1.0,
        "mention_score": 0.55,
    }
    assert _nonzero(resolved.file_features("lib/shop/cart.rb")) == {"module_file": 0.5, "mention_score": 0.55}
    assert resolved.counts["identifiers"] == 7 and resolved.counts["identifiers_resolved"] == 6


def test_path_mentions_with_lines(index: MentionIndex) -> None:
    """A path mention hits its file; its line suffix the chunk containing it."""
    resolved = index.resolve(extract_mentions("See `shop/cart.py:25` and tax.py and the docs in README.md."))
    assert _nonzero(resolved.chunk_features(3)) == {"path_line": 1.0, "path_file": 1.0, "mention_score": 0.7}
    assert _nonzero(resolved.chunk_features(2)) == {"path_file": 1.0, "mention_score": 0.6}
    assert _nonzero(resolved.file_features("src/shop/tax.py")) == {"path_file": 1.0, "mention_score": 0.6}
    assert _nonzero(resolved.file_features("README.md")) == {"path_file": 1.0, "mention_score": 0.6}
    assert resolved.files_hit() == ["src/shop/cart.py", "README.md", "src/shop/tax.py"]


def test_too_ambiguous_mentions_are_dropped_and_counted() -> None:
    """A name defined in more than `max_files` files adds nothing and is counted."""
    chunks = [Chunk(f"m{i}.py", 1, 2, "function", "run", "python") for i in range(3)]
    mentions = IssueMentions(identifiers=(Mention("run", ("backtick",)),))
    spread = resolve_mentions(mentions, [], chunks, max_files=3)
    assert spread.file_features("m0.py")["identifier_bare"] == pytest.approx(1 / 3)
    resolved = resolve_mentions(mentions, [], chunks, max_files=2)
    assert resolved.files_hit() == [] and resolved.counts["too_ambiguous"] == 1
    with pytest.raises(ValueError, match="max_files"):
        resolve_mentions(mentions, [], chunks, max_files=0)


def test_feature_list_and_strength_ladder() -> None:
    """Every feature but mention_score has a strength; the ladder puts trace lines above paths above names."""
    assert set(FEATURE_NAMES) == set(FEATURE_STRENGTH) | {"mention_score"}
    s = FEATURE_STRENGTH
    assert s["frame_line"] > s["frame_file"] > s["path_file"] > s["identifier_qualified"] > s["identifier_bare"]
