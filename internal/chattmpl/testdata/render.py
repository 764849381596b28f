# render.py renders the fixture templates with Python's Jinja2 as
# transformers' apply_chat_template does (an ImmutableSandboxedEnvironment
# with trim_blocks and lstrip_blocks, raise_exception, strftime_now and
# tojson), writing the expected outputs TestFixtures compares against:
#   python3 render.py   (Jinja2 3.1.6)
import datetime, json, os
import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

def raise_exception(m):
    raise jinja2.exceptions.TemplateError(m)

def strftime_now(fmt):  # TestFixtures' clock
    return datetime.datetime(2026, 12, 4, 18, 30).strftime(fmt)

CONVERSATIONS = {
    "user": [{"role": "user", "content": "Hello there"}],
    "system": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello there"}],
}

def text(v):
    return v["content"] if isinstance(v, dict) else (v or "")

for name in sorted(os.listdir(".")):
    conf_path = os.path.join(name, "tokenizer_config.json")
    if not os.path.isfile(conf_path):
        continue
    conf = json.load(open(conf_path))
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    env.filters["tojson"] = lambda x, indent=None: json.dumps(x, ensure_ascii=False, indent=indent)
    tmpl = env.from_string(conf["chat_template"])
    for conv, msgs in CONVERSATIONS.items():
        out = os.path.join(name, conv + ".golden")
        try:
            got = tmpl.render(messages=msgs, add_generation_prompt=True,
                              bos_token=text(conf.get("bos_token")), eos_token=text(conf.get("eos_token")))
        except jinja2.exceptions.TemplateError as e:
            got = "error: " + str(e) + "\n"
        open(out, "w").write(got)
