#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every contract is written down where a reader looks for it.

  - each symbol exported in client/libuebroker.sym is declared in
    include/*.h right after a /** ... */ block that names it (attribute or
    macro lines may stand between), and is mentioned in libuebroker(3);
  - each member of struct provider_ops, and each function declared in
    daemon/providers/provider.h, comes right after a /** ... */ block;
  - each of those blocks names every parameter (@name) and, unless the
    function returns void, says what it returns (Return:), as kernel-doc
    does.

Usage: test-contracts.py SOURCE_ROOT       check the tree, exit 1 naming what is missing
       test-contracts.py --self-test SOURCE_ROOT
                                           prove the check fails on a copy with
                                           one comment of each kind removed
"""

import pathlib
import re
import shutil
import sys
import tempfile

SYM_FILE = 'client/libuebroker.sym'
HEADER_GLOB = 'include/*.h'
MAN_PAGE = 'man/libuebroker.3.scd'
PROVIDER_H = 'daemon/providers/provider.h'

# A line that may stand between a doc comment and what it documents.
ATTRIBUTE_LINE = re.compile(r'^\s*(__attribute__\s*\(\(.*\)\)|[A-Z_][A-Z0-9_]*(\s*\(.*\))?)\s*$')


def exported_symbols(root):
    """The names under every global: of the version script."""
    text = re.sub(r'/\*.*?\*/', '', (root / SYM_FILE).read_text(), flags=re.S)
    symbols, in_global = [], False
    for line in text.splitlines():
        line = line.strip()
        if line in ('global:', 'local:'):
            in_global = line == 'global:'
        elif line.startswith('}'):
            in_global = False
        elif in_global and re.fullmatch(r'[A-Za-z_]\w*;', line):
            symbols.append(line[:-1])
    return symbols


def doc_comment_before(lines, index):
    """The /** ... */ block that ends right above lines[index] (attribute
    lines skipped), as text, or None."""
    i = index - 1
    while i >= 0 and ATTRIBUTE_LINE.match(lines[i]) and '*/' not in lines[i]:
        i -= 1
    if i < 0 or not lines[i].rstrip().endswith('*/'):
        return None
    end = i
    while i >= 0 and '/*' not in lines[i]:
        i -= 1
    if i < 0 or not lines[i].lstrip().startswith('/**'):
        return None
    return '\n'.join(lines[i:end + 1])


def top_level_declarations(lines, name):
    """Indexes of lines declaring or defining function @name at file scope:
    it starts in column 0 (macro bodies and calls are indented) with a type,
    and is not inside a comment."""
    pattern = re.compile(r'^(?!return\b)[A-Za-z_][\w\s\*]*?\b' + re.escape(name) + r'\s*\(')
    found, in_comment = [], False
    for i, line in enumerate(lines):
        if not in_comment and pattern.match(line):
            found.append(i)
        # Good enough for these headers: comments do not nest or share lines with code.
        if '/*' in line and '*/' not in line[line.index('/*'):]:
            in_comment = True
        elif in_comment and '*/' in line:
            in_comment = False
    return found


def declaration_text(lines, index):
    """The declaration starting at lines[index], up to its ';' or '{'."""
    text = ''
    for line in lines[index:index + 20]:
        text += ' ' + line.strip()
        if ';' in line or '{' in line:
            break
    return re.split(r'[;{]', text, maxsplit=1)[0]


def parameters_and_return(declaration):
    """(parameter names, whether it returns something) of a C function
    declaration or of a struct member that points at one."""
    m = re.search(r'\(\s*\*\s*\w+\s*\)\s*\((.*)\)\s*$', declaration)      # member: type (*name)(params)
    head = declaration[:m.start()] if m else None
    if not m:
        m = re.search(r'\b\w+\s*\((.*)\)\s*(__attribute__.*)?$', declaration)
        head = declaration[:m.start()] if m else ''
    if not m:
        return [], True
    names = []
    depth, current = 0, ''
    for ch in m.group(1) + ',':
        if ch == '(':
            depth += 1
        elif ch == ')':
            depth -= 1
        if ch == ',' and depth == 0:
            param = current.strip()
            current = ''
            if param in ('void', '...', ''):
                continue
            fn = re.search(r'\(\s*\*\s*(\w+)\s*\)', param)           # a function pointer parameter
            word = fn.group(1) if fn else re.search(r'(\w+)\s*(\[[^]]*\])?\s*$', param).group(1)
            names.append(word)
        else:
            current += ch
    returns = not re.search(r'(^|\s)void\s*$', head.strip()) and not re.fullmatch(r'\s*(static\s+inline\s+)?void\s*', head)
    return names, returns


def check_kernel_doc(what, comment, declaration, problems):
    names, returns = parameters_and_return(declaration)
    for name in names:
        if f'@{name}' not in comment:
            problems.append(f'{what}: its /** ... */ comment does not name @{name}')
    if returns and 'Return:' not in comment:
        problems.append(f'{what}: its /** ... */ comment does not say Return:')


def check_exported(root, problems):
    symbols = exported_symbols(root)
    if not symbols:
        problems.append(f'{SYM_FILE}: no exported symbols found')
    headers = {path: path.read_text().splitlines() for path in sorted(root.glob(HEADER_GLOB))}
    man = (root / MAN_PAGE).read_text()
    man_name_section = man.split('# NAME', 1)[-1].split('\n# ', 1)[0]

    for name in symbols:
        declared = [(path, i) for path, lines in headers.items() for i in top_level_declarations(lines, name)]
        if not declared:
            problems.append(f'{name}: exported but declared in no {HEADER_GLOB}')
        for path, i in declared:
            comment = doc_comment_before(headers[path], i)
            where = f'{path.relative_to(root)}:{i + 1}'
            if comment is None:
                problems.append(f'{name}: no /** ... */ comment right before its declaration ({where})')
            elif f'{name}()' not in comment:
                problems.append(f'{name}: the /** ... */ comment before {where} does not name {name}()')
            else:
                check_kernel_doc(name, comment, declaration_text(headers[path], i), problems)
        if not re.search(r'\b' + re.escape(name) + r'\b', man_name_section):
            problems.append(f'{name}: missing from the NAME section of {MAN_PAGE}')
        if f'*{name}*(' not in man.split('# DESCRIPTION', 1)[-1]:
            problems.append(f'{name}: not described (*{name}*()) in {MAN_PAGE} after DESCRIPTION')
    return len(symbols)


def struct_members(lines, struct):
    """(line index, member name) of each member of @struct, by its first line."""
    start = next((i for i, l in enumerate(lines) if l.startswith(f'struct {struct} {{')), None)
    if start is None:
        return None
    members, statement_start, in_comment = [], None, False
    for i in range(start + 1, len(lines)):
        line = lines[i].strip()
        if line.startswith('};'):
            return members
        if in_comment:
            in_comment = '*/' not in line
            continue
        if line.startswith('/*'):
            in_comment = '*/' not in line
            continue
        if not line:
            continue
        if statement_start is None:
            statement_start = i
        if line.endswith(';'):
            statement = ' '.join(l.strip() for l in lines[statement_start:i + 1])
            m = re.search(r'\(\s*\*\s*(\w+)\s*\)', statement) or re.search(r'(\w+)\s*(\[[^]]*\])?\s*;$', statement)
            members.append((statement_start, m.group(1) if m else statement))
            statement_start = None
    return None


def check_provider(root, problems):
    lines = (root / PROVIDER_H).read_text().splitlines()
    members = struct_members(lines, 'provider_ops')
    if not members:
        problems.append(f'{PROVIDER_H}: struct provider_ops not found, or without members')
        return 0
    for i, name in members:
        comment = doc_comment_before(lines, i)
        if comment is None:
            problems.append(f'provider_ops.{name}: no /** ... */ comment right before it ({PROVIDER_H}:{i + 1})')
        elif '(*' in declaration_text(lines, i):
            check_kernel_doc(f'provider_ops.{name}', comment, declaration_text(lines, i), problems)

    # The exported functions (and static inline helpers) of the contract.
    declaration = re.compile(r'^(?!return\b)[A-Za-z_][\w\s\*]*?\b(\w+)\s*\(')
    functions = sorted({m.group(1) for line in lines if (m := declaration.match(line))})
    for name in functions:
        for i in top_level_declarations(lines, name):
            comment = doc_comment_before(lines, i)
            if comment is None or f'{name}()' not in comment:
                problems.append(f'{name}: no /** {name}() ... */ comment right before it ({PROVIDER_H}:{i + 1})')
            else:
                check_kernel_doc(name, comment, declaration_text(lines, i), problems)
    return len(members) + len(functions)


def check(root):
    problems = []
    n_symbols = check_exported(root, problems)
    n_provider = check_provider(root, problems)
    return problems, n_symbols, n_provider


def remove_comment_before(path, pattern):
    """Deletes the /** ... */ block right above the first line matching @pattern."""
    lines = path.read_text().splitlines(keepends=True)
    target = next(i for i, l in enumerate(lines) if re.search(pattern, l))
    end = target - 1
    begin = end
    while '/**' not in lines[begin]:
        begin -= 1
    del lines[begin:end + 1]
    path.write_text(''.join(lines))


def remove_line(path, pattern):
    """Deletes the first line matching @pattern."""
    lines = path.read_text().splitlines(keepends=True)
    del lines[next(i for i, l in enumerate(lines) if re.search(pattern, l))]
    path.write_text(''.join(lines))


def self_test(root):
    """The check must notice each kind of missing contract."""
    cases = [
        ('include/uebroker.h', r'^int ueb_write\(', 'ueb_write: no /** ... */ comment'),
        (PROVIDER_H, r'\(\*session_ring\)', 'provider_ops.session_ring: no /** ... */ comment'),
        (PROVIDER_H, r'^int provider_choose_auto\(', 'provider_choose_auto: no /**'),
        (PROVIDER_H, r'LINE:^\s*\* @settings: may be NULL', 'provider_ops.probe: its /** ... */ comment does not name @settings'),
        (PROVIDER_H, r'LINE:^\s*\* Return: 1 if usable', 'provider_ops.probe: its /** ... */ comment does not say Return:'),
    ]
    failures = 0
    for file, pattern, expected in cases:
        with tempfile.TemporaryDirectory() as tmp:
            copy = pathlib.Path(tmp)
            for part in (SYM_FILE, MAN_PAGE, PROVIDER_H, *[str(p.relative_to(root)) for p in root.glob(HEADER_GLOB)]):
                (copy / part).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(root / part, copy / part)
            if pattern.startswith('LINE:'):
                remove_line(copy / file, pattern[5:])
            else:
                remove_comment_before(copy / file, pattern)
            problems, _, _ = check(copy)
            if any(expected in p for p in problems):
                print(f'ok: without its comment, the check says "{expected}..."')
            else:
                print(f'FAIL: removing the comment above /{pattern}/ in {file} went unnoticed: {problems}')
                failures += 1
    # And with nothing removed the copy passes, so the failures above are
    # the removal's doing.
    problems, _, _ = check(root)
    if problems:
        print('FAIL: the tree itself does not pass:', *problems, sep='\n  ')
        failures += 1
    return 1 if failures else 0


def main(argv):
    if len(argv) == 3 and argv[1] == '--self-test':
        return self_test(pathlib.Path(argv[2]))
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    problems, n_symbols, n_provider = check(pathlib.Path(argv[1]))
    for problem in problems:
        print(problem)
    if problems:
        print(f'{len(problems)} contract(s) missing', file=sys.stderr)
        return 1
    print(f'ok: {n_symbols} exported symbols and {n_provider} provider.h operations and functions documented')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
