# -*- Python -*-
import os

import lit.formats
import lit.util
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "NEO"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".neo", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs", "unit"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.neo_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%neo_src", config.neo_src_root))
config.substitutions.append(("%neo_obj", config.neo_obj_root))
config.substitutions.append(("%python", config.python_executable))
config.environment["PYTHONPATH"] = os.path.join(config.neo_src_root, "test", "lib")
config.environment["NEO_BIN"] = config.neo_tools_dir
# Split .neo files at "# -----" lines (spelled here so that RUN lines do not
# contain the marker themselves).
config.substitutions.append(("%neo_split", '--split-input-file="# ' + '-' * 5 + '"'))
llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.neo_tools_dir, config.llvm_tools_dir]
tools = ["neo-opt", "neo-translate", "neo-run"]
llvm_config.add_tool_substitutions(tools, tool_dirs)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.neo_tools_dir, append_path=True)
