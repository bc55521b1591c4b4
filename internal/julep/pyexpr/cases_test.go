package pyexpr

// cases are field values run three ways in the tests: compiled to JSONata and evaluated by sinew's
// JSONata evaluator, run by Eval, and run by python3 as Julep runs them (testdata/python_eval.py);
// testdata/python-values.json holds Python's answers (TestPythonValues checks them).
var cases = []string{
	// Names, attributes, keys and indexes.
	`$ _`, `_`, `_.topic`, `$ _.topic`, `$ _['topic']`, `$ _["user"]["name"]`, `$ _.user.address.city`,
	`$ _.user['address'].zip`, `$ inputs[0]`, `$ inputs[0].topic`, `$ inputs[1]['query']`, `$ outputs[-1].result`,
	`$ outputs[1].choices[0].message.content`, `$ steps[0].output.a`, `$ steps[-1].input.q`, `$ state.counter`,
	`$ state.history[-1]`, `$ _.nums[0]`, `$ _.nums[-1]`, `$ _.nested[0]`, `$ _.nested[0][1]`, `$ _.one[0]`,
	`$ _.words[_.n - 6]`, `$ _.topic[0]`, `$ _.topic[-1]`, `$ _['user']['tags'][1]`, `_[ 'n' ]`,
	`$ _.scores['bob']`, `$ _.products[1].name`, `$ _.pairs[1][1]`,
	// Slices.
	`$ _.nums[1:3]`, `$ _.nums[:2]`, `$ _.nums[5:]`, `$ _.nums[-3:]`, `$ _.nums[:-6]`, `$ _.nums[10:]`,
	`$ _.topic[:2]`, `$ _.topic[3:]`, `$ _.topic[-6:]`, `$ _.nested[:1]`, `$ _.nums[::-1]`, `$ _.topic[::-1]`,
	`$ _.nums[::2]`, `$ _.one[0:1]`, `$ _.words[1:-1]`,
	// Arithmetic, Python's way.
	`$ 1 + 2`, `$ _.n + 1`, `$ _.n - 10`, `$ _.n * 3`, `$ _.n / 2`, `$ _.n / 7`, `$ _.n // 2`, `$ _.neg // 2`,
	`$ _.n % 3`, `$ _.neg % 3`, `$ 7 % -3`, `$ _.x * 2`, `$ 2 ** 8`, `$ 2 ** -1`, `$ _.x ** 2`, `$ -_.n`, `$ +_.n`,
	`$ _.n * 1.0`, `$ 10 / 4 * 2`, `$ (1 + 2) * 3`, `$ 1 + 2 * 3`, `$ -2 ** 2`, `$ 17 // 5 * 5 + 17 % 5`,
	`$ 0.1 + 0.2 == 0.3`, `$ _.floats[0] + _.floats[2]`, `$ abs(_.neg)`, `$ abs(-2.5)`,
	// Strings.
	`$ _.topic + '!'`, `$ 'ab' * 3`, `$ 3 * 'xy'`, `$ '-' * 0`, `$ _.topic * 2`, `$ _.user.name + ' ' + _.user.address.city`,
	`$ _.topic.upper()`, `$ _.topic.lower()`, `$ _.s.strip()`, `$ _.s.lstrip()`, `$ _.s.rstrip()`,
	`$ _.sentence.split()`, `$ _.csv.split(',')`, `$ _.multiline.split('\n')`, `$ _.s.split()`, `$ ''.split()`,
	`$ ', '.join(_.words)`, `$ '-'.join(['a'])`, `$ ''.join([])`, `$ _.sentence.replace('quick', 'slow')`,
	`$ _.sentence.replace(' ', '')`, `$ _.topic.startswith('AI')`, `$ _.topic.startswith('ai')`,
	`$ _.topic.endswith('agents')`, `$ _.topic.endswith('')`, `$ _.sentence.capitalize()`, `$ 'HELLO'.capitalize()`,
	`$ _.sentence.find('brown')`, `$ _.sentence.find('zzz')`, `$ _.sentence.title()`, `$ _.sentence.count('o')`,
	`$ _.topic.strip('AI')`, `$ 'a,b'.split(',', 1)`, `$ _.unicode.upper()`, `$ len(_.unicode)`,
	`$ 'a' < 'b'`, `$ _.quote`, `$ _.multiline`,
	// Comparisons and membership.
	`$ _.n > 5`, `$ _.n >= 7`, `$ _.n < 7`, `$ _.n <= 6`, `$ _.n == 7`, `$ _.n != 7`, `$ _.topic == 'AI agents'`,
	`$ 1 < _.n < 10`, `$ 1 < _.n < 5`, `$ 0 <= _.zero < 1 <= _.n`, `$ _.x == 2.5`, `$ _.nums == [3, 1, 4, 1, 5, 9, 2, 6]`,
	`$ _.user == {'name': 'Ada'}`, `$ _.nested[0] == [1, 2]`, `$ 'AI' in _.topic`, `$ 'ai' in _.topic`,
	`$ 'name' in _.user`, `$ 'zip' in _.user`, `$ 4 in _.nums`, `$ 10 in _.nums`, `$ 'x' not in _.user.tags`,
	`$ [1, 2] in _.nested`, `$ [2, 1] in _.nested`, `$ _.none is None`, `$ _.n is not None`, `$ _.flag is True`,
	`$ _.off is False`, `$ _.user.get('nick') is None`, `$ 'a' in 'abc' in 'xabcx'`,
	// Truthiness, and/or/not.
	`$ not _.empty`, `$ not _.topic`, `$ not _.emptylist`, `$ not _.emptydict`, `$ not _.nums`, `$ not _.zero`,
	`$ not _.none`, `$ bool(_.user)`, `$ bool(_.emptydict)`, `$ bool('')`, `$ bool(0.0)`, `$ bool([0])`,
	`$ _.empty or 'default'`, `$ _.topic or 'default'`, `$ _.none or _.zero or 'last'`, `$ _.n and _.topic`,
	`$ _.zero and _.topic`, `$ _.emptylist or [1]`, `$ _.nums and len(_.nums)`, `$ _.flag and not _.off`,
	`$ _.n > 3 and _.n < 10`, `$ _.n > 10 or _.topic == 'AI agents'`, `$ not (_.n > 3)`, `$ _.user.get('nick') or _.user.name`,
	`$ _.emptydict or 'no dict'`, `$ (_.empty or _.none) is None`,
	// Conditional expressions.
	`$ 'big' if _.n > 5 else 'small'`, `$ 'big' if _.n > 50 else 'small'`, `$ _.nums[0] if _.nums else None`,
	`$ 'yes' if _.emptylist else 'no'`, `$ 1 if _.flag else 2 if _.off else 3`, `$ _.user.name if 'name' in _.user else 'anon'`,
	// f-strings and templates.
	`$ f'{_.topic}'`, `$ f'Topic: {_.topic}!'`, `$ f'{_.n} items'`, `$ f'{_.x}'`, `$ f'{_.n / 7}'`, `$ f'{_.flag} {_.none}'`,
	`$ f'{_.nums}'`, `$ f'{_.user.tags}'`, `$ f'{_.user.address}'`, `$ f'{_.mixed}'`, `$ f'{_.apos}'`, `$ f'{_.quote!r}'`,
	`$ f'{_.topic!r}'`, `$ f'{_.x:.2f}'`, `$ f'{_.n:5}|'`, `$ f'{_.topic:>12}|'`, `$ f'{_.topic:<12}|'`, `$ f'{_.n:03}'`,
	`$ f'{1234567:,}'`, `$ f'{0.25:.1%}'`, `$ f'{_.n:d}'`, `$ f'{_.topic:^13}'`, `$ f'{_.n * 2} and {_.n ** 2}'`,
	`$ f'''multi
line {_.topic}'''`, `$ f"{_.user['name']} lives in {_.user['address']['city']}"`, `$ f'{{literal}} {_.n}'`,
	`$ f'{len(_.words)} words: {", ".join(_.words)}'`, `$ f'{_.floats}'`, `$ f'{2.0}'`, `$ f'{1e20}'`, `$ f'{0.1 + 0.2}'`,
	`Hello {{ _.user.name }}!`, `{{_.topic}}`, `{{ _.n + 1 }} items`, `Q: {{ _.questions[0] }}\nA: {{ _.topic.upper() }}`,
	`{{ inputs[0].topic }} and {{ outputs[0].result }}`, `{{ _.nums }}`, `Total: {{ sum(_.nums) }}`,
	`{{ 'yes' if _.flag else 'no' }}`, `plain text`, `tab\there`, `brace {_.n}`, `price: $5`,
	// Lists, dicts and comprehensions.
	`$ [1, 2, 3]`, `$ []`, `$ [_.n, _.topic]`, `$ [_.nums, _.words]`, `$ [[1, 2]]`, `$ [_.one[0]]`, `$ (1, 2)`,
	`$ [_.user.tags]`, `$ {'a': 1, 'b': [1, 2]}`, `$ {}`, `$ {'k': _.nums, 'u': _.user.name}`, `$ {_.topic: _.n}`,
	`$ {'n': _.n, 'nested': {'deep': [_.x]}}`, `$ [x * 2 for x in _.nums]`, `$ [x for x in _.nums if x > 3]`,
	`$ [w.upper() for w in _.words if 'a' in w]`, `$ [i['name'] for i in _.products if i['qty'] > 0]`,
	`$ [i.name for i in _.products]`, `$ [[x] for x in _.nums[:2]]`, `$ [p for p in _.nested]`, `$ [p for p in _.one]`,
	`$ [x + y for x in [1, 2] for y in [10, 20]]`, `$ [x for x in range(10) if x % 2 if x > 3]`,
	`$ [c for c in 'abc']`, `$ [k for k in _.scores]`, `$ {k: v * 2 for k, v in _.scores.items()}`,
	`$ {k: v for k, v in _.scores.items() if v > 80}`, `$ {i['name']: i['price'] for i in _.products}`,
	`$ {w: len(w) for w in _.words}`, `$ [(n, l) for n, l in _.pairs]`, `$ [l for n, l in _.pairs if n > 1]`,
	`$ [x for x in _.emptylist]`, `$ {k: 1 for k in []}`, `$ [x * y for (x, y) in zip([1, 2], [3, 4])]`,
	`$ _.nums + [10]`, `$ _.nums + _.emptylist`, `$ [1] * 3`, `$ [[1]] * 2`, `$ _.words + _.user.tags`,
	// Builtins.
	`$ len(_.nums)`, `$ len(_.topic)`, `$ len(_.user)`, `$ len([])`, `$ len(_.one)`, `$ str(_.n)`, `$ str(_.x)`,
	`$ str(_.flag)`, `$ str(_.none)`, `$ str(_.nums)`, `$ str(_.user.address)`, `$ str(3 / 1)`, `$ str(_.topic)`,
	`$ int(_.num_str)`, `$ int(_.x)`, `$ int(-2.7)`, `$ int(True)`, `$ float(_.float_str)`, `$ float(_.n)`,
	`$ float('1e3')`, `$ bool(_.n)`, `$ sum(_.nums)`, `$ sum(_.floats)`, `$ sum([])`, `$ sum(_.nums, 10)`,
	`$ sum(i['price'] * i['qty'] for i in _.products)`, `$ min(_.nums)`, `$ max(_.nums)`, `$ min(3, 1, 2)`,
	`$ max(_.n, 10)`, `$ max(_.floats)`, `$ max(x['price'] for x in _.products)`, `$ round(2.5)`, `$ round(3.5)`,
	`$ round(_.x)`, `$ round(2.675, 2)`, `$ round(1.23456, 3)`, `$ round(-0.5)`, `$ round(_.n / 3, 1)`,
	`$ list(range(5))`, `$ list(range(2, 6))`, `$ list(range(0, 10, 3))`, `$ list(range(5, 0, -2))`,
	`$ list(range(0))`, `$ list(range(_.n))`, `$ any([0, '', None])`, `$ any(_.nums)`, `$ all(_.nums)`,
	`$ all([])`, `$ any(x > 8 for x in _.nums)`, `$ all(i['price'] > 1 for i in _.products)`,
	`$ list(zip(_.words, _.nums))`, `$ list(zip([1], [[2, 3]]))`, `$ list(zip([], [1]))`,
	`$ list(enumerate(_.words))`, `$ list(enumerate('ab', 1))`, `$ [f'{i}. {w}' for i, w in enumerate(_.words, 1)]`,
	`$ list(_.topic)`, `$ list(_.user)`, `$ tuple(_.nums[:2])`, `$ list(map(str, _.nums[:3]))`,
	`$ reduce(max, _.nums)`, `$ list(map(len, _.words))`, `$ list(map(abs, [-1, 2]))`,
	`$ dict(a=1, b=_.n)`, `$ dict(_.user.address, zip='X', n=1)`, `$ dict(_.pairs)`, `$ dict(zip(_.words, _.nums))`, `$ list(_.scores.keys())`,
	`$ list(_.scores.values())`, `$ list(_.scores.items())`, `$ _.scores.get('alice')`, `$ _.scores.get('zed', 0)`,
	`$ _.user.get('tags')`, `$ _.emptydict.get('x')`, `$ list(dict(a=[1]).values())`, `$ _.nums.count(1)`,
	`$ _.nums.index(4)`, `$ max(_.words, key=len)`, `$ [*_.nums[:2], *_.words[:1], 0]`,
	`$ {**_.user.address, 'zip': 'X'}`, `$ {'a': 1, **_.scores}`, `$ [*_.one]`,
	// JSON.
	`$ load_json(_.json_text)`, `$ load_json(_.json_text)['a'][2]`, `$ json.loads('[1, 2.5, "x"]')`,
	`$ dump_json(_.user.address)`, `$ dump_json([1, 'two', None, True, 2.5])`, `$ dump_json({'a': {'b': []}})`,
	`$ json.dumps(_.nums)`, `$ dump_json(_.unicode)`, `$ dump_json(_.quote)`, `$ json.dumps({'x': 1}, indent=2)`,
	`$ dump_json(load_json(_.json_text))`, `$ extract_json('Here: ` + "```" + `json\n{"k": [1]}\n` + "```" + `')`,
	// Julep's constants and stdlib members.
	`$ true`, `$ null`, `$ NEWLINE.join(_.words)`, `$ false or 'f'`, `$ math.floor(_.x)`, `$ math.ceil(_.x)`,
	`$ math.sqrt(16)`, `$ math.pi > 3`, `$ math.pow(2, 3)`, `$ math.log(math.e)`, `$ string.digits`, `$ string.ascii_uppercase[:3]`,
	`$ base64.b64encode('hello')`, `$ base64.b64decode('aGVsbG8=')`, `$ statistics.mean(_.nums)`, `$ statistics.median(_.nums)`,
	`$ re.sub('[aeiou]', '_', _.sentence)`, `$ re.findall('[a-z]+', 'ab1cd22ef')`, `$ re.split(',+', 'a,,b,c')`,
	`$ search_regex('b(r)own', _.sentence).group(1)`, `$ match_regex('[a-z ]+', _.sentence)`, `$ match_regex('[a-z]+', _.sentence)`,
	`$ re.search('(\\d+)', 'ab 42 cd').group(0)`, `$ bool(re.match('the', _.sentence))`, `$ re.escape('a.b')`,
	// Bitwise operators and other constructs JSONata lacks.
	`$ 6 & 3`, `$ 6 | 3`, `$ 1 << 4`, `$ ~5`, `$ 'a%sb' % 'X'`, `$ '%d items' % _.n`, `$ _.sentence.split(' ')[::2]`,
	`$ f'{_.topic:*^15}'`, `$ f'{_.n:+}'`, `$ f'{255:x}'`, `$ f'{_.x:e}'`, `$ _.topic.zfill(12)`,
}
