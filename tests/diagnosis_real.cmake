#===- tests/diagnosis_real.cmake - diagnoses that hold on untuned programs ===#
# diagnosis_test records the scenarios of examples/ as a user would and
# checks that no finding contradicts its own facts.
syspgo_test(diagnosis_test PAGE_CACHE SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/diagnosis_test.cc)
add_dependencies(diagnosis_test checkpoint_stall)
# diagnosis_real_test records real programs from Debian (a PyTorch training
# loop, a parallel build of zlib's source package) and checks the findings
# against what was measured of them. PAGE_CACHE: each warms the files its
# program reads, and the answer holds only while they stay in the cache.
syspgo_test(diagnosis_real_test PAGE_CACHE SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/diagnosis_real_test.cc)
