#===- tests/diagnosis_real.cmake - diagnoses that hold on untuned programs ===#
# diagnosis_test records the scenarios of examples/ as a user would and
# checks that no finding contradicts its own facts.
syspgo_test(diagnosis_test PAGE_CACHE SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/diagnosis_test.cc)
add_dependencies(diagnosis_test checkpoint_stall)
