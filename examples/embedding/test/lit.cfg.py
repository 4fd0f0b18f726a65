# -*- Python -*-
# The lit tests of the embedding example: run through my-opt, and through the
# neo-translate of the Neo installation that find_package(Neo) found.
import os

import lit.formats

config.name = "my-opt"
config.test_format = lit.formats.ShTest(True)
config.suffixes = [".mlir", ".neo"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.my_opt_dir, "test")
config.excludes = ["lit.cfg.py", "lit.site.cfg.py.in"]
config.substitutions.append(("my-opt", os.path.join(config.my_opt_dir, "my-opt")))
config.substitutions.append(("neo-translate", os.path.join(config.neo_tools_dir, "neo-translate")))
config.substitutions.append(("FileCheck", config.filecheck))
