/**
 * The program-text scanners of the argument policy (src/core/services/exec/policy/scripts.ts), table-driven:
 * what must be refused (runs programs, touches other files, reads the environment) and what must
 * pass (ordinary text processing, including the letters e/w/r inside regexes and text).
 */
import { describe, expect, it } from 'vitest';
import { scanAwk, scanScript, scanSed, scanSqliteCli } from '../../src/core/services/exec/policy/scripts.js';

describe('sed scanner', () => {
  const fine = [
    's/w/x/',
    's/a/b/g',
    's/a/b/2g',
    's/a/b/gI',
    's/a/b/p',
    's/e/w/g', // e and w as replacement text, not flags
    's|/usr/local|/opt|g',
    's/[/]/X/', // delimiter inside a bracket expression (GNU)
    's/[]x]/y/',
    's/\\/w/x/',
    'y/abc/xyz/',
    'y/ew/we/',
    '2,4p',
    '$d',
    '/^#/d',
    '/write/d',
    '/^e/!d',
    '\\%read%p',
    '0~3d',
    '1,+2d',
    'a\\ text with w',
    'a text with w and e and r',
    '$ a\\\nwelcome\\\nand every reader',
    'i\\\nwrite me',
    'c\\\nchanged',
    '1{p;p}',
    ':a;N;$!ba;s/\\n/ /g',
    'b end; s/x/y/; :end',
    't',
    'q',
    'q 5',
    'l 40',
    '=',
    'n;d',
    '# a comment with e and w\np',
    '/x/I,/y/Mp',
    's/(a|b)/\\1/E',
    's/a/b/;s/c/d/',
    'F',
    'z',
  ];
  it.each(fine)('%j passes', (script) => {
    expect(scanSed(script)).toBeUndefined();
  });

  const refused: [string, RegExp][] = [
    ['1e id', /'e' runs/],
    ['e', /'e' runs/],
    ['e id', /'e' runs/],
    ['$e touch x', /'e' runs/],
    ['s/a/b/e', /'e' flag/],
    ['s/a/b/ge', /'e' flag/],
    ['s/a/b/w out', /'w' flag/],
    ['s/a/b/gw out', /'w' flag/],
    ['s/a/b/ w out', /'w' writes/], // GNU accepts a space before w: caught as the w command
    ['/x/w f', /'w' writes/],
    ['w /tmp/x', /'w' writes/],
    ['1W f', /'W' writes/],
    ['1r /etc/passwd', /'r' reads/],
    ['R /etc/passwd', /'R' reads/],
    ['s/[/]/id/e', /'e' flag/],
    [':x 1e id', /'e' runs/], // GNU ends the label at whitespace
    ['b x;1e id', /'e' runs/],
    ['b end\n1e id\n:end', /'e' runs/],
    ['1{e id\n}', /'e' runs/],
    ['a text\ne id', /'e' runs/],
    ['a\\\nline\ne id', /'e' runs/],
    ['y/a/b/;e id', /'e' runs/],
    ['q;e id', /'e' runs/],
    ['q 5\ne id', /'e' runs/],
    ['/a/I e id', /'e' runs/],
    ['\\,x,e id', /'e' runs/],
    ['2,4{/x/w out\n}', /'w' writes/],
  ];
  it.each(refused)('%j is refused', (script, why) => {
    expect(scanSed(script)).toMatch(why);
  });
});

describe('awk scanner', () => {
  const fine = [
    '$1 > 3 {print}',
    '$3 > 100 { print $2 }',
    'NR > 1 && $2 >= 10 { s += $2 } END { print s }',
    '{s+=$2} END {print s}',
    'a || b',
    '$1 == "x" || $2 == "y" { print }',
    '{ print ($1 > 3) }',
    '{ print ($1 > $2 ? "big" : "small") }',
    '{ printf "%s|%s\\n", $1, $2 }', // | inside a string
    '{ print "a > b" }', // > inside a string
    '/a|b/ { n++ } END { print n }', // | inside a regex
    '$0 ~ /x>y/',
    '{ x = $2 / 2; y = $3 / 4; print x, y }', // divisions
    '{ x++ / 2 }',
    'BEGIN { FS = "," } { print $1 }',
    '{ gsub(/system/, "s"); print }', // keyword inside a regex
    '{ print "getline ENVIRON system(" }', // keywords inside a string
    '# system("id") in a comment\n{ print }',
    '{ a[$1] += $2 } END { for (k in a) print k, a[k] }',
    'length($0) > 72',
    'function f(x) { return x * 2 } { print f($1) }',
    '{ print sprintf("%d", $1) }',
    '{ print substr($0, 2) }',
    '/[/]/ { print }',
    '{ print ($1 > 2), ($2 < 3) }', // comparisons in parentheses after print
  ];
  it.each(fine)('%j passes', (program) => {
    expect(scanAwk(program)).toBeUndefined();
  });

  const refused: [string, RegExp][] = [
    ['{print > "f"}', /writes to a file/],
    ['{print >> "f"}', /writes to a file/],
    ['{print $1, $2 > "out.txt"}', /writes to a file/],
    ['{printf("%s", $1) > "f"}', /writes to a file/],
    ['{print $1 | "sh"}', /pipes output/],
    ['{print | "cat 1>&2"}', /pipes output/],
    ['BEGIN { print "x" |& "sh" }', /pipes output/],
    ['BEGIN { system("id") }', /system\(\)/],
    ['BEGIN { system ("id") }', /system\(\)/],
    ['BEGIN { "id" | getline x }', /getline/],
    ['BEGIN { getline line < "/etc/passwd" }', /getline/],
    ['{ getline }', /getline/],
    ['BEGIN { print ENVIRON["HOME"] }', /environment/],
    ['BEGIN { print PROCINFO["pid"] }', /environment/],
    ['BEGIN { ARGV[1] = "/etc/passwd"; ARGC = 2 }', /ARGV/],
    ['BEGIN { f = "system"; @f("id") }', /indirect/],
    ['@load "filefuncs"', /directives/],
    ['@include "x.awk"', /directives/],
    ['/"/ { x = 1 } BEGIN { system("id") } /"/', /system/], // a quote inside a regex must not open a string
    ['{ x++ / 2; system("id"); y = 1 / 2 }', /system/], // x++ / is a division, not a regex
    ['{ x = 1 \\\n/ 2; system("id"); y = 3 / 4 }', /system/], // line continuation keeps the division
    ['# "\nBEGIN { system("id") } # "', /system/], // a quote in a comment opens nothing
    ['/[/ ; system("id") ; x=/]/', /system/], // mawk ends the regex at the slash inside brackets
  ];
  it.each(refused)('%j is refused', (program, why) => {
    expect(scanAwk(program)).toMatch(why);
  });
});

describe('sqlite3 CLI scanner', () => {
  it.each(['select 1', '.tables', '.schema t', '.mode csv', '.headers on', ".print 'hi'", 'select * from t where a = \'attach\'', 'select "vacuum" from t', 'create table t(a); insert into t values (1)', '-- attach\nselect 1', 'select [into] from t'])('%j passes', (sql) => {
    expect(scanSqliteCli(sql)).toBeUndefined();
  });
  it.each([
    ['.shell id', /dot-command '.shell'/],
    ['.system id', /dot-command/],
    ['.load x', /dot-command/],
    ['.output /tmp/x', /dot-command/],
    ['.once /tmp/x', /dot-command/],
    ['.open /etc/x', /dot-command/],
    ['.read x.sql', /dot-command/],
    ['.import x t', /dot-command/],
    ['.SHELL id', /dot-command/],
    ["ATTACH '/tmp/x' AS y", /ATTACH/],
    ["attach database 'x' as y", /ATTACH/],
    ["select '--'; attach 'x' as y", /ATTACH/], // -- inside a string is not a comment
    ["select 'a\\'; attach 'x' as y", /ATTACH/], // no backslash escapes in SQL
    ["select load_extension('x')", /function/],
    ["select readfile('/etc/passwd')", /function/],
    ["select writefile('x', 'y')", /function/],
    ["select edit('x')", /function/],
    ["VACUUM INTO '/tmp/copy.db'", /VACUUM INTO/],
    ['pragma writable_schema = 1', /PRAGMA/],
  ] as [string, RegExp][])('%j is refused', (sql, why) => {
    expect(scanSqliteCli(sql)).toMatch(why);
  });
});

describe('dc and jq scanners', () => {
  it('dc: ! runs a shell command', () => {
    expect(scanScript('dc', '2 3 + p')).toBeUndefined();
    expect(scanScript('dc', '!id')).toMatch(/shell/);
    expect(scanScript('dc', '1 2 !<a')).toMatch(/shell/);
  });
  it('jq: import and include load modules; the words inside strings are fine', () => {
    expect(scanScript('jq', '.a | .b')).toBeUndefined();
    expect(scanScript('jq', '.[] | select(.name == "import")')).toBeUndefined();
    expect(scanScript('jq', 'import "x" as y; .')).toMatch(/modules/);
    expect(scanScript('jq', 'include "x"; .')).toMatch(/modules/);
  });
});
