import type { Argument, Command, Option } from 'commander';
import { HEADER_FORMS } from '../api/options.js';
import { CONFIG_SHOW_COMMANDS } from '../commands/config/index.js';
import { THROTTLE_TOKEN_STATUSES } from '../commands/sandbox/index.js';
import { STEP_NAMES } from '../engine/index.js';
import { UsageError } from '../errors.js';
import { DIALECTS } from '../schema/index.js';
import { HELP_TOPICS } from './help-topics.js';

// `migrate completion bash|zsh|fish`: a completion script written from the program itself (its commands, their
// sub-commands and each command's options), so it never lists an option that is gone or misses a new one. A word is
// completed as what it is: a command's sub-commands (`migrate ledger <TAB>`), an option's fixed values (`--dialect
// <TAB>`: spec kraken), files where a file is named, directories where a directory is, and nothing where the value is
// free (a number, a URL, a code). Install as each shell expects:
//   bash: migrate completion bash > /etc/bash_completion.d/migrate   (or source <(migrate completion bash))
//   zsh:  migrate completion zsh > "${fpath[1]}/_migrate"
//   fish: migrate completion fish > ~/.config/fish/completions/migrate.fish

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
type Shell = (typeof SHELLS)[number];

/** What a word completes to. `list`: comma-separated words (`--only create,notes`). */
type Completion =
  { kind: 'files' } | { kind: 'dirs' } | { kind: 'none' } | { kind: 'words'; words: readonly string[]; list?: boolean };

/** The options whose value is one of a fixed set; each option's parser refuses any other. */
export const OPTION_VALUES: Readonly<Record<string, Completion & { kind: 'words' }>> = {
  '--dialect': { kind: 'words', words: DIALECTS },
  '--header-form': { kind: 'words', words: Object.keys(HEADER_FORMS) },
  '--only': { kind: 'words', words: Object.keys(STEP_NAMES), list: true },
  '--throttle-token-status': { kind: 'words', words: THROTTLE_TOKEN_STATUSES },
};

interface OptionWords {
  flag: string;
  help: string;
  /** Undefined: a switch, no value. */
  value: Completion | undefined;
}

interface CommandWords {
  /** `push`, `ledger copy`. */
  path: string;
  name: string;
  summary: string;
  options: OptionWords[];
  /** The first operand (`push <dir>`, `completion <shell>`). */
  operand: Completion;
  /** A group's sub-commands (`ledger copy`); its own options and operand are unused. */
  subcommands: CommandWords[];
}

const FILES: Completion = { kind: 'files' };
const DIRS: Completion = { kind: 'dirs' };
const NONE: Completion = { kind: 'none' };

/** An option's value by its name in the flags (`--state <dir>`), unless it is one of a fixed set. */
function valueOf(option: Option): Completion | undefined {
  if (!option.required && !option.optional) return undefined;
  const fixed = option.long === undefined ? undefined : OPTION_VALUES[option.long];
  if (fixed !== undefined) return fixed;
  const name = /[<[]([^>\]]+)[>\]]/.exec(option.flags)?.[1] ?? '';
  return name === 'dir' ? DIRS : name === 'file' || name === 'path' ? FILES : NONE;
}

function operandOf(argument: Argument | undefined, program: Command): Completion {
  const name = argument?.name();
  if (name === 'dir') return DIRS;
  if (name === 'shell') return { kind: 'words', words: SHELLS };
  if (name === 'topic') return { kind: 'words', words: [...HELP_TOPICS, ...program.commands.map((c) => c.name())] };
  if (name === 'command') return { kind: 'words', words: CONFIG_SHOW_COMMANDS };
  return NONE;
}

function wordsOf(program: Command, parent: Command = program, prefix = ''): CommandWords[] {
  return parent.commands.map((command) => ({
    path: `${prefix}${command.name()}`,
    name: command.name(),
    summary: command.summary() || command.description(),
    options: [...command.options, ...helpOption()].flatMap((option: Option) =>
      option.long === undefined ? [] : [{ flag: option.long, help: option.description, value: valueOf(option) }],
    ),
    operand: operandOf(command.registeredArguments[0], program),
    subcommands: wordsOf(program, command, `${prefix}${command.name()} `),
  }));
}

function helpOption(): Option[] {
  return [{ long: '--help', required: false, optional: false, description: 'show help' } as Option];
}

/** Every command that runs, sub-commands in place of their group. */
const leaves = (commands: CommandWords[]): CommandWords[] =>
  commands.flatMap((command) => (command.subcommands.length > 0 ? leaves(command.subcommands) : [command]));

/** The commands `config show` takes, with their options (`config show push --concurrency 4`). */
const shownBy = (commands: CommandWords[]): CommandWords[] =>
  commands.filter((command) => CONFIG_SHOW_COMMANDS.includes(command.path));

export function completionScript(program: Command, shell: string): string {
  const known = SHELLS.find((name) => name === shell);
  if (known === undefined)
    throw new UsageError(`no completion for ${shell}; give one of ${SHELLS.join(', ')}.`, 'completion_shell');
  const commands = wordsOf(program);
  const write: Record<Shell, (words: CommandWords[]) => string> = { bash, zsh, fish };
  return write[known](commands);
}

/** One value completion per flag, whichever command has it (a flag means the same in every command). */
function valuedFlags(commands: CommandWords[]): Map<string, Completion> {
  const valued = new Map<string, Completion>();
  for (const option of leaves(commands).flatMap((command) => command.options))
    if (option.value !== undefined) valued.set(option.flag, option.value);
  return valued;
}

function bashCompletion(completion: Completion): string {
  switch (completion.kind) {
    case 'files':
      return 'COMPREPLY=( $(compgen -f -- "$cur") )';
    case 'dirs':
      return 'COMPREPLY=( $(compgen -d -- "$cur") )';
    case 'none':
      return 'COMPREPLY=()';
    case 'words':
      return completion.list === true
        ? `_migrate_list "${completion.words.join(' ')}"`
        : `COMPREPLY=( $(compgen -W "${completion.words.join(' ')}" -- "$cur") )`;
  }
}

/** Comma-separated words (--only create,notes): the last one completed. */
const BASH_LIST = `_migrate_list() {
  local done=""
  [[ "$cur" == *,* ]] && done="\${cur%,*},"
  COMPREPLY=( $(compgen -P "$done" -W "$1" -- "\${cur##*,}") )
  compopt -o nospace 2>/dev/null
}
`;

function bash(commands: CommandWords[]): string {
  const groups = commands.filter((command) => command.subcommands.length > 0);
  const flagsOf = (command: CommandWords): string => command.options.map((option) => option.flag).join(' ');
  const optionCases = leaves(commands)
    .map((command) => `    '${command.path}') echo "${flagsOf(command)}" ;;`)
    .join('\n');
  const operandCases = leaves(commands)
    .map((command) => `      '${command.path}') ${bashCompletion(command.operand)} ;;`)
    .join('\n');
  const groupCases = groups
    .map((group) => {
      const subcommands: Completion = { kind: 'words', words: group.subcommands.map((sub) => sub.name) };
      return `        ${group.name}) ${bashCompletion(subcommands)} ;;`;
    })
    .join('\n');
  const valued = valuedFlags(commands);
  const valueCases = [...valued]
    .map(([flag, completion]) => `    ${flag}) ${bashCompletion(completion)}; return ;;`)
    .join('\n');
  return `# migrate completion for bash: source <(migrate completion bash)
# The options of a command ('push', 'ledger copy').
_migrate_options() {
  case "$1" in
${optionCases}
  esac
}
${BASH_LIST}_migrate() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}"
  local command="\${COMP_WORDS[1]}" first=2
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=( $(compgen -W "${commands.map((command) => command.name).join(' ')}" -- "$cur") )
    return
  fi
  case "$command" in
    ${groups.map((group) => group.name).join('|')})
      if [ "$COMP_CWORD" -eq 2 ]; then
        case "$command" in
${groupCases}
        esac
        return
      fi
      command="$command \${COMP_WORDS[2]}"
      first=3 ;;
  esac
  case "$prev" in
${valueCases}
  esac
  local opts
  opts="$(_migrate_options "$command")"
  # config show COMMAND takes that command's flags too.
  if [ "$command" = "config show" ] && [ "$COMP_CWORD" -gt 3 ]; then
    case " ${CONFIG_SHOW_COMMANDS.join(' ')} " in
      *" \${COMP_WORDS[3]} "*) opts="$opts $(_migrate_options "\${COMP_WORDS[3]}")" ;;
    esac
  fi
  if [[ "$cur" == -* ]]; then
    COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
    return
  fi
  # The first operand only: words before this one that are neither options nor an option's value.
  local i operands=0 valued="${[...valued.keys()].join(' ')}"
  for (( i = first; i < COMP_CWORD; i++ )); do
    case "\${COMP_WORDS[i]}" in
      -*) ;;
      *) case " $valued " in *" \${COMP_WORDS[i-1]} "*) ;; *) operands=$((operands + 1)) ;; esac ;;
    esac
  done
  if [ "$operands" -eq 0 ]; then
    case "$command" in
${operandCases}
    esac
  fi
}
complete -o filenames -F _migrate migrate
`;
}

/** Text inside a zsh _arguments spec or _describe entry: brackets and colons escaped. */
function zshText(text: string): string {
  return text.replace(/([[\]:\\'])/g, (char) => (char === "'" ? "'\\''" : `\\${char}`));
}

function zshAction(completion: Completion, what: string): string {
  switch (completion.kind) {
    case 'files':
      return `:${what}:_files`;
    case 'dirs':
      return `:${what}:_files -/`;
    case 'none':
      return `:${what}: `;
    case 'words':
      return completion.list === true
        ? `:${what}:_values -s , ${what} ${completion.words.join(' ')}`
        : `:${what}:(${completion.words.join(' ')})`;
  }
}

function zshSpecs(command: CommandWords): string[] {
  return command.options.map(
    (option) =>
      `'${option.flag}[${zshText(option.help)}]${option.value === undefined ? '' : zshAction(option.value, 'value')}'`,
  );
}

function zsh(commands: CommandWords[]): string {
  const described = (list: CommandWords[], indent: string): string =>
    list.map((command) => `${indent}'${command.name}:${zshText(command.summary)}'`).join('\n');
  const groups = commands.filter((command) => command.subcommands.length > 0);
  const groupCases = groups
    .map(
      (group) => `        ${group.name}) subcommands=(\n${described(group.subcommands, ' '.repeat(10))}\n        ) ;;`,
    )
    .join('\n');
  /** `_arguments` for a command; `extra`: the command `config show` shows, whose flags it takes too. */
  const argumentsOf = (command: CommandWords, extra?: CommandWords): string => {
    const operand = command.operand.kind === 'none' ? [] : [`'1${zshAction(command.operand, 'operand')}'`];
    const specs = [...zshSpecs(command), ...(extra === undefined ? [] : zshSpecs(extra)), ...operand];
    return `_arguments -s ${specs.join(' ')}`;
  };
  const cases = leaves(commands)
    .map((command) => {
      if (command.path !== 'config show') return `    '${command.path}') ${argumentsOf(command)} ;;`;
      const shown = shownBy(commands)
        .map((target) => `        ${target.path}) ${argumentsOf(command, target)} ;;`)
        .join('\n');
      const otherwise = `        *) ${argumentsOf(command)} ;;`;
      return `    '${command.path}')\n      case $words[2] in\n${shown}\n${otherwise}\n      esac ;;`;
    })
    .join('\n');
  return `#compdef migrate
# migrate completion for zsh: migrate completion zsh > "\${fpath[1]}/_migrate"
_migrate() {
  local -a commands subcommands
  commands=(
${described(commands, '    ')}
  )
  if (( CURRENT == 2 )); then
    _describe 'command' commands
    return
  fi
  shift words
  (( CURRENT-- ))
  local command=$words[1]
  case $command in
    ${groups.map((group) => group.name).join('|')})
      if (( CURRENT == 2 )); then
        case $command in
${groupCases}
        esac
        _describe 'command' subcommands
        return
      fi
      command="$command $words[2]"
      shift words
      (( CURRENT-- )) ;;
  esac
  case $command in
${cases}
  esac
}
# In $fpath (autoloaded), this file is _migrate's body: complete now; sourced, register for later.
if [[ $funcstack[1] == _migrate ]]; then
  _migrate "$@"
else
  compdef _migrate migrate
fi
`;
}

/** Text inside a fish single-quoted string. */
function fishText(text: string): string {
  return text.replace(/(['\\])/g, '\\$1');
}

function fishAction(completion: Completion): string {
  switch (completion.kind) {
    case 'files':
      return '-r -F';
    case 'dirs':
      return "-x -a '(__fish_complete_directories)'";
    case 'none':
      return '-x';
    case 'words':
      return completion.list === true
        ? `-x -a '(__fish_complete_list , "string split , ${completion.words.join(',')}")'`
        : `-x -a '${completion.words.join(' ')}'`;
  }
}

function fish(commands: CommandWords[]): string {
  const grouped = commands.filter((command) => command.subcommands.length > 0).map((command) => command.name);
  const lines = [
    '# migrate completion for fish: migrate completion fish > ~/.config/fish/completions/migrate.fish',
    '# Whether the command being completed is $argv (push, "ledger copy"): the words typed before this one, options',
    '# left out, up to a whole command.',
    'function __migrate_is',
    '    set -l words (commandline -opc)',
    '    set -e words[1]',
    '    set -l path',
    '    for word in $words',
    "        string match -q -- '-*' $word; and continue",
    '        set -a path $word',
    `        if not contains -- $path[1] ${grouped.join(' ')}; or test (count $path) -eq 2`,
    '            break',
    '        end',
    '    end',
    '    test "$path" = "$argv"',
    'end',
    'complete -c migrate -f',
  ];
  const when = (path: string): string => `-n '__migrate_is ${path === '' ? '""' : path}'`;
  for (const command of commands)
    lines.push(`complete -c migrate ${when('')} -a ${command.name} -d '${fishText(command.summary)}'`);
  for (const group of commands.filter((command) => command.subcommands.length > 0))
    for (const sub of group.subcommands)
      lines.push(`complete -c migrate ${when(group.name)} -a ${sub.name} -d '${fishText(sub.summary)}'`);
  const optionLines = (command: CommandWords, condition: string): string[] =>
    command.options.map(
      (option) =>
        `complete -c migrate ${condition} -l ${option.flag.slice(2)}` +
        `${option.value === undefined ? '' : ` ${fishAction(option.value)}`} -d '${fishText(option.help)}'`,
    );
  for (const command of leaves(commands)) {
    lines.push(...optionLines(command, when(command.path)));
    if (command.operand.kind !== 'none') lines.push(`complete -c migrate ${fishOperand(command)}`);
  }
  for (const target of shownBy(commands))
    lines.push(...optionLines(target, `-n '__migrate_is config show; and __fish_seen_subcommand_from ${target.path}'`));
  return `${lines.join('\n')}\n`;
}

/** The first operand of a command; a word of a fixed set is offered until one is given. */
function fishOperand(command: CommandWords): string {
  const { operand, path } = command;
  if (operand.kind === 'files') return `-n '__migrate_is ${path}' -F`;
  if (operand.kind !== 'words') return `-n '__migrate_is ${path}' ${fishAction(operand).replace(/^-x /, '')}`;
  const words = operand.words.join(' ');
  const given = operand.words.filter((word) => word !== command.name).join(' ');
  return `-n '__migrate_is ${path}; and not __fish_seen_subcommand_from ${given}' -a '${words}'`;
}

export function registerCompletionCommand(program: Command): void {
  program
    .command('completion <shell>')
    .description(`print a shell completion script (${SHELLS.join(', ')})`)
    .action((shell: string) => {
      process.stdout.write(completionScript(program, shell));
    });
}
