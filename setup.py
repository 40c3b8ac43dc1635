"""What pyproject.toml cannot say: the shipped demo vault (``vaults/demo/``, which README's
first command asks from a clone) goes into the wheel as ``vaultmem/demo/`` for ``vaultmem demo``,
and the man page (``docs/vaultmem.1``) into ``share/man/man1``. Everything else is in pyproject.toml."""

from setuptools import find_namespace_packages, setup

DEMO = "vaults/demo"

setup(
    packages=[
        *find_namespace_packages(include=["vaultmem*"], exclude=["*.__pycache__"]),
        "vaultmem.demo",  # its folders are data, listed so setuptools copies them without a warning
        *(f"vaultmem.demo.{p}" for p in find_namespace_packages(DEMO, exclude=["*.__pycache__"])),
    ],
    package_dir={"vaultmem.demo": DEMO},
    package_data={
        "vaultmem": ["resources/*", "templates/*.md", "web/templates/*.html", "web/static/*"],
        "vaultmem.demo": ["**/*.md", ".gitignore", ".obsidian/*.json"],
    },
    data_files=[("share/man/man1", ["docs/vaultmem.1"])],
)
