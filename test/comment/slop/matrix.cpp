#include <vector>

// Class for a matrix
class Matrix {
 public:
  // Constructor
  Matrix(int rows, int cols) : rows_(rows), cols_(cols), data_(rows * cols) {}

  // Get the value at a position
  double get(int r, int c) const {
    // Return the value
    return data_[r * cols_ + c];
  }

  // Set the value at a position
  void set(int r, int c, double v) {
    // Set the value
    data_[r * cols_ + c] = v;
  }

 private:
  int rows_;  // number of rows
  int cols_;  // number of columns
  std::vector<double> data_;  // the data
};
