# -*- Python -*-
# Runs the gtest unit tests of unittests/ as part of check-neo.
import os

import lit.formats

config.name = "NEO-Unit"
config.suffixes = []
config.test_exec_root = os.path.join(config.neo_obj_root, "unittests")
config.test_source_root = config.test_exec_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
